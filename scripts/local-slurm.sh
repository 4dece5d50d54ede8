#!/usr/bin/env bash
# A single-node SLURM cluster on localhost, for trying and testing `--profile profiles/slurm`.
#
#   scripts/local-slurm.sh install  only install the Debian packages (if missing; exit 1 if impossible)
#   scripts/local-slurm.sh up       install (Debian packages, once) and start munge + SLURM; returns
#                                   when `sinfo` reports the node idle
#   scripts/local-slurm.sh down     cancel every job of this cluster, stop the daemons by their PID
#                                   files, and put the cluster's slurm.conf aside
#   scripts/local-slurm.sh status   daemons and `sinfo`
#
# Needs root and apt-get (Debian 12: slurm-wlm 22.05, munge). Works without systemd or cgroups:
# proctrack/linuxproc, task/none, no accounting (accounting_storage/none: `sacct` is unavailable,
# as on many small clusters), one default partition `local` holding this machine's CPUs and memory
# as `slurmd -C` reports them. State, logs and PID files live in $LOCAL_SLURM_DIR
# (default /var/lib/dpclust-slurm).
#
# `down` moves /etc/slurm/slurm.conf into $LOCAL_SLURM_DIR: with the client installed but no
# configuration, SLURM commands fail at once, whereas with a configuration naming a stopped
# controller each one retries for ~9 s, and the SLURM executor plugin runs `scontrol show config`
# at every `snakemake` start (see docs in README, "Running on a SLURM cluster").
set -euo pipefail

DIR="${LOCAL_SLURM_DIR:-/var/lib/dpclust-slurm}"
CONF=/etc/slurm/slurm.conf
MARK="# written by dpclust scripts/local-slurm.sh"
PACKAGES=(slurmctld slurmd slurm-client munge)
WAIT_S="${LOCAL_SLURM_WAIT_S:-90}"

log() { echo "local-slurm: $*" >&2; }
die() { log "error: $*"; exit 1; }

alive() {  # alive PIDFILE: the process named by PIDFILE is running and is the daemon the file is
  # named after (slurmctld.pid: slurmctld), so that a stale file whose PID was reused never counts
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "$1" .pid)" ]
}

stop_pidfile() {  # stop_pidfile NAME PIDFILE: TERM, wait up to 15 s, then KILL
  local name=$1 file=$2 pid i
  alive "$file" || { rm -f "$file"; return 0; }
  pid=$(cat "$file")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name ($pid) did not stop on TERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  log "installing ${missing[*]}"
  # Keep the packages' init scripts from starting daemons (no systemd here; we start them below).
  local policy=/usr/sbin/policy-rc.d ours=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; ours=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$DIR/log/apt.log" 2>&1; then
    apt-get update -qq >>"$DIR/log/apt.log" 2>&1 || true
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$DIR/log/apt.log" 2>&1 \
      || { [ $ours = 1 ] && rm -f "$policy"; die "apt-get install failed (see $DIR/log/apt.log)"; }
  fi
  [ $ours = 1 ] && rm -f "$policy"
  return 0
}

start_munge() {
  local key=/etc/munge/munge.key pidfile=/run/munge/munged.pid
  if [ ! -s "$key" ]; then
    log "creating munge key"
    install -d -o munge -g munge -m 0700 /etc/munge
    if command -v mungekey >/dev/null; then mungekey --create --keyfile="$key" --force
    else dd if=/dev/urandom of="$key" bs=1 count=1024 status=none; fi
    chown munge:munge "$key"; chmod 0400 "$key"
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  if alive "$pidfile"; then
    return 0  # a munged is already running (ours from an earlier `up`, or the system's)
  fi
  runuser -u munge -- /usr/sbin/munged
  touch "$DIR/run/munged.ours"
  local i
  for i in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "munged did not come up"
}

write_conf() {
  if [ -e "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
    die "$CONF exists and was not written by this script: this machine already has a SLURM configuration"
  fi
  local node user
  node=$(slurmd -C | head -1 | sed -e 's/^NodeName=\([^ ]*\).*/\1/')
  user=root
  id slurm >/dev/null 2>&1 && user=slurm
  install -d -o "$user" -m 0755 "$DIR/state" "$DIR/log"
  install -d -m 0755 "$DIR/spool" /etc/slurm
  chown "$user" "$DIR/log"
  cat > "$CONF" <<EOF
$MARK: a single-node cluster on localhost.
# Stop it with scripts/local-slurm.sh down (which moves this file into $DIR).
ClusterName=dpclust-local
SlurmctldHost=$node(127.0.0.1)
SlurmUser=$user
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# Finished jobs stay visible to squeue for 5 min (the executor plugin's status checks need >= 2 min).
MinJobAge=300
ReturnToService=2
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
$(slurmd -C | head -1) NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  echo "$node"
}

node_state() { sinfo -h -o %T 2>/dev/null | head -1 || true; }

up() {
  [ "$(id -u)" = 0 ] || die "needs root (apt-get, munge and SLURM daemons)"
  mkdir -p "$DIR/log" "$DIR/run"
  local t0=$SECONDS node state i
  install_packages
  start_munge
  node=$(write_conf)
  alive "$DIR/run/slurmctld.pid" || /usr/sbin/slurmctld
  alive "$DIR/run/slurmd.pid" || /usr/sbin/slurmd
  for i in $(seq $((WAIT_S * 2))); do
    state=$(node_state)
    case "$state" in
      idle|mixed|allocated) log "up: node $node $state after $((SECONDS - t0)) s"; sinfo; return 0 ;;
      down*|drain*|unknown*) scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
  done
  log "node state after ${WAIT_S} s: '${state}'; logs in $DIR/log"
  tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
  die "cluster did not become idle"
}

down() {
  [ "$(id -u)" = 0 ] || die "needs root"
  mkdir -p "$DIR/run"
  local i
  if [ -e "$CONF" ] && grep -qF "$MARK" "$CONF" && alive "$DIR/run/slurmctld.pid"; then
    # Cancel every job first: slurmstepd processes of running jobs outlive slurmd.
    if [ -n "$(squeue -h -o %A 2>/dev/null)" ]; then
      squeue -h -o %A | xargs -r scancel 2>/dev/null || true
      for i in $(seq 100); do [ -z "$(squeue -h -t R,CG,PD -o %A 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  stop_pidfile slurmd "$DIR/run/slurmd.pid"
  stop_pidfile slurmctld "$DIR/run/slurmctld.pid"
  if [ -e "$DIR/run/munged.ours" ]; then
    stop_pidfile munged /run/munge/munged.pid
    rm -f "$DIR/run/munged.ours"
  fi
  if [ -e "$CONF" ] && grep -qF "$MARK" "$CONF"; then
    mv -f "$CONF" "$DIR/slurm.conf.down"
  fi
  log "down"
}

status() {
  local name
  for name in slurmctld slurmd; do
    if alive "$DIR/run/$name.pid"; then echo "$name: running (pid $(cat "$DIR/run/$name.pid"))"
    else echo "$name: stopped"; fi
  done
  if alive /run/munge/munged.pid; then echo "munged: running"; else echo "munged: stopped"; fi
  if [ -e "$CONF" ] && alive "$DIR/run/slurmctld.pid"; then sinfo; fi
}

case "${1:-}" in
  install)
    [ "$(id -u)" = 0 ] || die "needs root (apt-get)"
    mkdir -p "$DIR/log"; install_packages ;;
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 install|up|down|status" >&2; exit 2 ;;
esac
