#!/usr/bin/env bash
# Set up (scripts/setup.sh), check the style (scripts/lint.sh: ruff, mypy; seconds) and run the test
# suite. Extra arguments go to pytest (e.g. -m "not slow"; -n 0 runs in one process).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
bash scripts/lint.sh
# one worker per core (pytest-xdist); a test file's tests stay together in one worker, in order; files
# are handed out in collection order (the longest, end-to-end ones first: tests/conftest.py)
exec python -m pytest -n "${DPCLUST_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder "$@"
