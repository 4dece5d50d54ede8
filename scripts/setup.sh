#!/usr/bin/env bash
# Create .venv (if missing) and install the locked dependencies plus dpclust in editable mode.
# Re-installs only when requirements.lock or pyproject.toml changed. Needs Python >= 3.11 and pip.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      PYTHON="$candidate"; break
    fi
  done
fi
[ -n "$PYTHON" ] || { echo "error: Python >= 3.11 not found (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.dpclust-installed
want=$(cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements.lock
  .venv/bin/python -m pip install --quiet --no-deps -e .
  echo "$want" > "$stamp"
fi
