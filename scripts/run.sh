#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the main job: snakemake on the default config (the full
# protocol of every paper: hours). Extra arguments go to snakemake, e.g.
#   scripts/run.sh --configfile config/quick.yaml        every item in minutes
#   scripts/run.sh --cores 8                             cores (default: all of this machine's)
# A run that was killed resumes where it stopped: the lock a dead run left is removed (only when no
# other scripts/run.sh works in this directory and no snakemake process, however started, has this
# directory as its working directory) and its incomplete files are re-run. While a snakemake runs
# here this script refuses to start (exit 1) and leaves its lock alone. Liveness is read from /proc
# (Linux); without /proc a left lock is never removed automatically (the message says how to).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${DPCLUST_SKIP_SETUP:-}" ] || bash scripts/setup.sh   # (the tests run it in an existing environment)
export PATH="$PWD/.venv/bin:$PATH"
# What Snakemake reports with a traceback or without naming the file (a missing or invalid config file,
# a target written after --configfile): one line naming the file and the fix, exit 2
if [ -x .venv/bin/python ] && [ -f Snakefile ]; then
  .venv/bin/python -m dpclust.pipeline preflight -- "$@" || exit $?
fi
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
# The pid of a live snakemake whose working directory is this one (its scheduler, or a job process
# it spawned), found in /proc: a process whose program is `snakemake`, or a Python running the
# `snakemake` entry-point script or `-m snakemake`. Status 2: no /proc to look in.
live_snakemake() {
  local proc="${DPCLUST_PROC_DIR:-/proc}"   # (the tests point this elsewhere to check the fallback)
  [ -e "$proc/self/cwd" ] || return 2
  local dir pid arg i argv
  for dir in "$proc"/[0-9]*; do
    pid=${dir##*/}
    [ "$pid" != "$$" ] && [ "$dir/cwd" -ef . ] || continue     # -ef: same directory (test builtin, no fork)
    argv=()
    mapfile -d '' -t argv 2>/dev/null < "$dir/cmdline" || continue
    [ "${#argv[@]}" -gt 0 ] || continue
    case "${argv[0]##*/}" in
      snakemake) echo "$pid"; return 0 ;;
      python*|pypy*)
        for ((i = 1; i < ${#argv[@]}; i++)); do
          arg=${argv[i]}
          if [ "$arg" = -m ]; then
            [ "${argv[i + 1]:-}" = snakemake ] && { echo "$pid"; return 0; }
            break
          fi
          case "$arg" in
            -c) break ;;
            -W|-X) i=$((i + 1)) ;;   # interpreter options with an argument
            -*) ;;                   # other interpreter options (-u, -I, ...)
            *) [ "${arg##*/}" = snakemake ] && { echo "$pid"; return 0; }; break ;;
          esac
        done ;;
    esac
  done
  return 1
}
status=0
pid=$(live_snakemake) || status=$?
if [ "$status" -eq 0 ]; then
  echo "error: a snakemake run is active in $PWD (pid $pid); wait for it to finish, or stop it first" >&2
  exit 1
fi
if [ -n "$(ls -A .snakemake/locks 2>/dev/null)" ]; then
  if [ "$status" -eq 2 ]; then
    echo "error: .snakemake/locks in $PWD is not empty: a snakemake run is active here, or a previous run" \
         "was killed; this system has no /proc to tell which. If no snakemake runs in this directory," \
         "remove the lock by hand with 'snakemake --unlock' (with the same arguments), then run" \
         "scripts/run.sh again" >&2
    exit 1
  fi
  echo "dpclust: a previous run was killed; removing its lock and resuming it" >&2
  snakemake --unlock "$@" >/dev/null
fi
exec snakemake "${cores[@]}" --rerun-incomplete "$@"
