#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Pliant and runs every test with ctest.
# Usage: scripts/test.sh [release|sanitize|debug]   (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
scripts/install-deps.sh --browser
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset"
