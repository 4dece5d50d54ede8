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
offline_hint() {
  echo "error: installing the locked dependencies failed (above). Offline? Build a wheelhouse on a" >&2
  echo "  connected machine (pip download -r requirements.lock setuptools wheel -d wheels), copy it here, run" >&2
  echo "  PIP_FIND_LINKS=\$PWD/wheels PIP_NO_INDEX=1 $0" >&2
  exit 1
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # a newer pip is welcome, not required (offline, the wheelhouse may not have one)
  .venv/bin/python -m pip install --quiet --upgrade pip 2>/dev/null || true
  .venv/bin/python -m pip install --quiet -r requirements.lock || offline_hint
  .venv/bin/python -m pip install --quiet --no-deps -e . || offline_hint
  echo "$want" > "$stamp"
fi
