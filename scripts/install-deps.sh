#!/usr/bin/env bash
# Installs the Debian 12 packages Pliant needs, only those missing, and the npm packages of
# package-lock.json (three.js for the viewer, playwright-core for its browser test) when
# node_modules is missing or older than the lock file. Safe to run repeatedly. libbullet-dev is only
# for the optional Bullet comparison benchmark (bench/bullet/). The python3-* packages are Debian's
# interpreter's: the Python module is built for /usr/bin/python3 (README "Python").
# Usage: scripts/install-deps.sh [--browser] [--clang]
#   --browser: also Debian's chromium, for the browser test
#   --clang (or --fuzz): also Clang 14 with its sanitizer and libFuzzer runtimes and its OpenMP
#           (libomp, with the Archer tool for ThreadSanitizer), for the `fuzz` preset
#           (scripts/fuzz.sh) and the `tsan` preset; nothing else builds with Clang
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(g++ cmake ninja-build ccache libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev
          libtinyobjloader-dev zlib1g-dev libbullet-dev clang-format nodejs npm
          python3-dev python3-numpy python3-pybind11 pybind11-dev python3-pytest python3-matplotlib
          python3-setuptools python3-wheel python3-pip python3-venv python3-mypy)
# pliant render --video pipes frames to ffmpeg; its ctest reads the video back with ffprobe.
packages+=(ffmpeg)
# Third-party readers of the frame files in the readers.* tests (tests/readers).
packages+=(python3-vtk9 python3-meshio assimp-utils)
packages+=(python3-jsonschema)  # the test of docs/scene.schema.json (tests/schema)
packages+=(libopenmpi-dev openmpi-bin)  # mpirun -n N pliant sweep (PLIANT_WITH_MPI) and its ctest
for flag in "$@"; do
  case "$flag" in
    --browser) packages+=(chromium) ;;
    --clang|--fuzz) packages+=(clang-14 libclang-rt-14-dev libomp-14-dev) ;;
    *) echo "install-deps: unknown option '$flag' (expected --browser or --clang)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm may come from elsewhere than Debian (nodesource, nvm); take them when they work.
if command -v node >/dev/null && command -v npm >/dev/null; then
  kept=()
  for p in "${missing[@]}"; do [ "$p" = nodejs ] || [ "$p" = npm ] || kept+=("$p"); done
  missing=("${kept[@]}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "pliant: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# `npm ci` installs exactly the locked versions; npm writes node_modules/.package-lock.json last.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "pliant: npm ci (three.js, playwright-core)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
