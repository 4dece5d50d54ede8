#!/usr/bin/env bash
# The style the tools enforce (configured in pyproject.toml): ruff (pyflakes, pycodestyle, import
# order, pyupgrade; lines <= 120) over the tree, mypy over the DP core, the settings and the claims
# engine. Run by scripts/test.sh before the tests, and by pre-commit (.pre-commit-config.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON_VENV:-.venv}/bin"
"$PY/ruff" check --quiet .
"$PY/mypy"
