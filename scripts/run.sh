#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the main job: snakemake on the default config (the full
# protocol of every paper: hours). Extra arguments go to snakemake, e.g.
#   scripts/run.sh --configfile config/quick.yaml        every item in minutes
#   scripts/run.sh --cores 8                             cores (default: all of this machine's)
# A run that was killed resumes where it stopped: the lock a dead run left is removed (only when no
# other scripts/run.sh works in this directory) and its incomplete files are re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${DPCLUST_SKIP_SETUP:-}" ] || bash scripts/setup.sh   # (the tests run it in an existing environment)
export PATH="$PWD/.venv/bin:$PATH"
cores=()
case " $* " in
  *" --cores "*|*" --cores="*|*" -c "*|*" -j "*|*" --jobs "*|*" --jobs="*|*" --profile "*|*" --profile="*) ;;
  *) cores=(--cores "$(nproc 2>/dev/null || echo 1)") ;;
esac
mkdir -p .snakemake
exec 9>.snakemake/dpclust-run.flock
if ! flock -n 9; then
  echo "error: another scripts/run.sh is running in $PWD; wait for it to finish" >&2
  exit 1
fi
if [ -n "$(ls -A .snakemake/locks 2>/dev/null)" ]; then
  echo "dpclust: a previous run was killed; removing its lock and resuming it" >&2
  snakemake --unlock "$@" >/dev/null
fi
exec snakemake "${cores[@]}" --rerun-incomplete "$@"
