#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Pliant (Release) and runs the default scene.
# Extra arguments go to `pliant run`, e.g. scripts/run.sh rope --frames 600.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target pliant_cli
./build/release/apps/pliant run "$@"
