#!/usr/bin/env bash
# Makes the Python module `pliant` importable: builds it (the release preset) for Debian's
# interpreter, /usr/bin/python3, which has Debian's numpy (a `python3` found first on PATH, e.g.
# pyenv's, may have neither numpy nor the ABI the module is built for), and makes a virtual
# environment over that interpreter, build/venv, that sees Debian's packages
# (--system-site-packages) and the module in the build tree (a .pth file). Prints the line that
# activates it last. Called by scripts/run.sh; run it alone after scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3
if ! "$python" -c "import numpy" 2>/dev/null; then
  echo "python-env: $python cannot import numpy; install python3-numpy (scripts/install-deps.sh)" >&2
  exit 1
fi
cmake --preset release >/dev/null
cmake --build --preset release --target pliant_python
venv=build/venv
if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c "import numpy" 2>/dev/null; then
  rm -rf "$venv"
  # --without-pip: Debian's pip (python3-pip) is seen through the system site packages.
  "$python" -m venv --system-site-packages --without-pip "$venv"
fi
site=$("$venv/bin/python3" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$PWD/build/release/python" >"$site/pliant-build.pth"
"$venv/bin/python3" -c "import numpy, pliant" || { echo "python-env: the module does not import" >&2; exit 1; }
echo "python: . build/venv/bin/activate   # then python3 (Debian's, with numpy) imports pliant"
