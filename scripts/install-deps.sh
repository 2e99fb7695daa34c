#!/usr/bin/env bash
# Installs the Debian 12 packages Pliant needs, only those missing. Safe to run repeatedly.
set -euo pipefail
packages=(g++ cmake ninja-build libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev libtinyobjloader-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pliant: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
