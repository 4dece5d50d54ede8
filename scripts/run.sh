#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the main job: snakemake --cores 8 on the default config.
# Extra arguments go to snakemake, e.g.  scripts/run.sh --configfile config/quick.yaml
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
exec snakemake --cores 8 "$@"
