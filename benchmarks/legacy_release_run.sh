#!/usr/bin/env bash
# The grid release's "before" at today's code: scripts/run.sh with every release of every job made as
# fl(value + noise), the same noise doubles (benchmarks/legacy_releases/sitecustomize.py). Run it in a
# clone of its own, then compare with an ordinary run of the same commit and part:
#   DPCLUST_DATA_MIRROR=../shared/datasets benchmarks/legacy_release_run.sh --cores 2 --config 'papers=[cohenaddad2022]'
#   .venv/bin/python benchmarks/equivalence.py LEGACY/results NOW/results --paired
# Its results are not DP on a real machine: a benchmark of the change, never a result to publish.
set -euo pipefail
cd "$(dirname "$0")/.."
# A line per process that released: pid, releases made. Appended, never truncated: a run resumed after a
# kill (scripts/run.sh resumes) then counts the releases of every sitting; a new run starts from a clone
# of its own, without the file.
log="$PWD/results/LEGACY_RELEASES.tsv"
mkdir -p results
touch "$log"
export DPCLUST_LEGACY_RELEASES="$log"
export PYTHONPATH="$PWD/benchmarks/legacy_releases${PYTHONPATH:+:$PYTHONPATH}"
status=0
bash scripts/run.sh "$@" || status=$?
awk -F'\t' '{n += $2; p += 1} END {printf "legacy releases: %d in %d processes (%s)\n", n, p, FILENAME}' "$log"
exit "$status"
