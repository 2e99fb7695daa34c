#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Pliant (Release) and runs the default scene, writing the
# HTML viewer page (DIR/viewer.html, its path printed last) with the other output. It also builds
# the Python module and prints the line that makes it importable (scripts/python-env.sh).
# Extra arguments go to `pliant run`, e.g. scripts/run.sh rope --frames 600 --out out/rope.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target pliant_cli
scripts/python-env.sh
# The page goes into the output folder (--out DIR, default out) unless --html is given.
out=out
html_given=0
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  case "${args[i]}" in
    --out) out="${args[i + 1]:-out}" ;;
    --out=*) out="${args[i]#--out=}" ;;
    --html | --html=*) html_given=1 ;;
  esac
done
if [ "$html_given" -eq 0 ]; then
  set -- "$@" --html "$out/viewer.html"
fi
./build/release/apps/pliant run "$@"
