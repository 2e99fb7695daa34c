#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Pliant and runs every test with ctest.
# Usage: scripts/test.sh [release|sanitize|debug|tsan]   (default: release)
#   tsan: ThreadSanitizer (Clang) builds and runs the determinism tests only
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
if [ "$preset" = tsan ]; then
  scripts/install-deps.sh --clang
else
  scripts/install-deps.sh --browser
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset"
