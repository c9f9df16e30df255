#!/usr/bin/env bash
# Real Slurm 22.05 on this machine, as the oracle of the simulator (docs/fidelity.md).
#
#   oracle.sh setup                 install Debian packages, munge key, MariaDB data dir, users, bridge
#   oracle.sh start                 start munged, MariaDB, slurmdbd, the node namespaces (idempotent)
#   oracle.sh run SCENARIO OUTDIR   reset Slurm's state, load the scenario, replay its jobs, record
#   oracle.sh stop                  stop every daemon this script started (by its recorded PID)
#   oracle.sh status                what runs
#
# A scenario is a directory with sched.conf (appended to conf/slurm.conf.in), accounts.sacctmgr
# (sacctmgr commands, one a line) and jobs.csv (submit offset s, user, account, partition, QOS,
# nodes, CPUs, memory MB per node, time limit min, real runtime s, and optionally a --dependency
# naming earlier jobs jNNN by their line). Needs root. State lives in
# $ORACLE_ROOT (default /var/lib/slurmtwin-oracle); nothing under /etc/slurm is touched.
set -euo pipefail
export TZ=UTC  # sacct and the log's timestamps are read back as UTC

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${ORACLE_ROOT:-/var/lib/slurmtwin-oracle}"
export SLURM_CONF="$ROOT/etc/slurm.conf"
BRIDGE=br-storacle
NET=10.77.0
NODES=(n1 n2 n3 n4)
PIDS="$ROOT/run/pids"  # one file per daemon we started: NAME -> PID

log() { echo "[oracle $(date +%H:%M:%S)] $*" >&2; }
die() {
  echo "oracle.sh: $*" >&2
  exit 1
}

need_root() { [[ $(id -u) == 0 ]] || die "must run as root (daemons, users, network namespaces)"; }

# ---------------------------------------------------------------- set-up (idempotent)
setup() {
  need_root
  local pkgs=(slurmctld slurmd slurmdbd slurm-client munge mariadb-server iproute2 util-linux)
  local missing=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    # No daemon may start from a package's postinst (this harness starts its own, by PID): deny
    # service starts while installing, unless the machine already has a policy.
    local policy=/usr/sbin/policy-rc.d made_policy=0
    if [[ ! -e $policy ]]; then
      printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 0755 "$policy" && made_policy=1
    fi
    apt-get update -qq
    local rc=0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null || rc=$?
    ((made_policy)) && rm -f "$policy"
    ((rc == 0)) || die "apt-get install ${missing[*]} failed (exit $rc)"
  fi
  mkdir -p "$ROOT"/{etc,run/pids,log,state,spool,mysql,out}
  chown slurm:slurm "$ROOT"/{log,state,spool}
  if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  mkdir -p /run/munge && chown munge:munge /run/munge
  if [[ ! -d "$ROOT/mysql/mysql" ]]; then
    chown mysql:mysql "$ROOT/mysql"
    mariadb-install-db --user=mysql --datadir="$ROOT/mysql" --skip-test-db > "$ROOT/log/mariadb-install.log" 2>&1
  fi
  sed "s#@ROOT@#$ROOT#g" "$HERE/conf/slurmdbd.conf.in" > "$ROOT/etc/slurmdbd.conf"
  sed "s#@ROOT@#$ROOT#g" "$HERE/conf/cgroup.conf.in" > "$ROOT/etc/cgroup.conf"
  chown slurm:slurm "$ROOT/etc/slurmdbd.conf"
  chmod 0600 "$ROOT/etc/slurmdbd.conf"
  # Base slurm.conf so that client commands work before the first scenario.
  [[ -s "$SLURM_CONF" ]] || sed -e "s#@ROOT@#$ROOT#g" -e "s#@HOST@#$(hostname -s)#g" "$HERE/conf/slurm.conf.in" > "$SLURM_CONF"
  for n in "${NODES[@]}"; do mkdir -p "$ROOT/spool/$n" && chown slurm:slurm "$ROOT/spool/$n"; done
  log "setup done ($ROOT)"
}

# Linux users named in a sacctmgr script ("add user NAME ...").
ensure_users() {
  local name
  for name in $(grep -ioE '^\s*(sacctmgr\s+(-i\s+)?)?(add|create)\s+user\s+[a-z0-9_]+' "$1" | awk '{print $NF}'); do
    id "$name" > /dev/null 2>&1 || useradd -M -s /bin/bash "$name"
  done
}

# ---------------------------------------------------------------- daemons
alive() { [[ -s "$PIDS/$1" ]] && kill -0 "$(cat "$PIDS/$1")" 2> /dev/null; }

# spawn NAME CMD...: runs CMD in the background, records its PID.
spawn() {
  local name=$1
  shift
  if alive "$name"; then return 0; fi
  setsid "$@" >> "$ROOT/log/$name.out" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name"
}

stop_one() {
  local name=$1 pid
  [[ -s "$PIDS/$name" ]] || return 0
  pid=$(cat "$PIDS/$name")
  if kill -0 "$pid" 2> /dev/null; then
    kill -TERM "$pid" 2> /dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2> /dev/null && kill -KILL "$pid" 2> /dev/null || true
  fi
  rm -f "$PIDS/$name"
}

wait_for() {  # wait_for SECONDS DESCRIPTION CMD...
  local t=$1 what=$2
  shift 2
  for _ in $(seq 1 $((t * 5))); do
    if "$@" > /dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "timed out waiting for $what"
}

net_up() {
  ip link show "$BRIDGE" > /dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  local addrs
  addrs=$(ip -4 addr show dev "$BRIDGE")
  [[ $addrs == *"$NET.1/24"* ]] || ip addr add "$NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local k=11 n
  for n in "${NODES[@]}"; do
    local ns="st-$n" veth="vst$n"
    if [[ ! -e "/run/netns/$ns" ]]; then
      ip netns add "$ns"
      ip link add "$veth" type veth peer name eth0 netns "$ns"
      ip link set "$veth" master "$BRIDGE" up
      ip -n "$ns" addr add "$NET.$k/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
    fi
    k=$((k + 1))
  done
}

net_down() {
  local n
  for n in "${NODES[@]}"; do
    [[ -e "/run/netns/st-$n" ]] && ip netns del "st-$n"
    ip link del "vst$n" 2> /dev/null || true
  done
  ip link del "$BRIDGE" 2> /dev/null || true
}

mysql_q() { mariadb --socket="$ROOT/run/mysql.sock" -uroot -e "$1"; }

start() {
  need_root
  [[ -d "$ROOT/mysql/mysql" ]] || setup
  net_up
  spawn munged setpriv --reuid=munge --regid=munge --init-groups munged -F
  # A credential round trip, not the socket file: a stale socket survives a killed munged.
  wait_for 10 munged bash -c "munge -n | unmunge"
  spawn mariadb mariadbd --user=mysql --datadir="$ROOT/mysql" --socket="$ROOT/run/mysql.sock" \
    --pid-file="$ROOT/run/mariadb.pid" --bind-address=127.0.0.1 --port=3307 --skip-name-resolve
  chown mysql:mysql "$ROOT/run" 2> /dev/null || true
  wait_for 60 MariaDB mysql_q "select 1"
  mysql_q "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'oracle';
           GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
  start_dbd
  log "started munged, MariaDB, slurmdbd; namespaces ${NODES[*]}"
}

start_dbd() {
  spawn slurmdbd slurmdbd -D
  wait_for 60 slurmdbd bash -c "exec 3<>/dev/tcp/127.0.0.1/6819"
}

start_ctld() {
  spawn slurmctld slurmctld -D -i  # drops to SlurmUser itself
  wait_for 60 slurmctld scontrol ping
  local n
  for n in "${NODES[@]}"; do
    spawn "slurmd-$n" nsenter --net="/run/netns/st-$n" env SLURM_CONF="$SLURM_CONF" slurmd -D -N "$n"
  done
  wait_for 90 "idle nodes" bash -c "[[ \$(scontrol -o show node | grep -c 'State=IDLE ') == ${#NODES[@]} ]]"
}

cancel_all() { squeue -h -o %i 2> /dev/null | xargs -r scancel 2> /dev/null || true; }

stop_slurm() {
  local n
  if alive slurmctld; then cancel_all; fi
  stop_one slurmctld
  for n in "${NODES[@]}"; do stop_one "slurmd-$n"; done
}

stop() {
  need_root
  stop_slurm
  stop_one slurmdbd
  stop_one mariadb
  stop_one munged
  net_down
  log "stopped"
}

status() {
  local f
  for f in "$PIDS"/*; do
    [[ -e $f ]] || continue
    if kill -0 "$(cat "$f")" 2> /dev/null; then echo "$(basename "$f") running (pid $(cat "$f"))"; else
      echo "$(basename "$f") dead"; fi
  done
}

# ---------------------------------------------------------------- one scenario
# Fresh accounting database, fresh controller state (no usage, no decay history, job ids from 1),
# the scenario's slurm.conf and associations.
reset_for() {
  local sc=$1
  stop_slurm
  stop_one slurmdbd
  mysql_q "DROP DATABASE IF EXISTS slurm_acct_db;"
  rm -rf "${ROOT:?}/state" && mkdir -p "$ROOT/state" && chown slurm:slurm "$ROOT/state"
  {
    sed -e "s#@ROOT@#$ROOT#g" -e "s#@HOST@#$(hostname -s)#g" "$HERE/conf/slurm.conf.in"
    echo "# ---- scenario $(basename "$sc"): sched.conf"
    cat "$sc/sched.conf"
  } > "$SLURM_CONF"
  : > "$ROOT/log/slurmctld.log"
  start_dbd
  sacctmgr -i add cluster oracle > /dev/null
  ensure_users "$sc/accounts.sacctmgr"
  local line
  while IFS= read -r line || [[ -n $line ]]; do
    line="${line%%#*}"
    [[ -z "${line// /}" ]] && continue
    line="${line#sacctmgr }"
    line="${line#-i }"
    # shellcheck disable=SC2086
    sacctmgr -i $line > /dev/null || die "sacctmgr refused: $line"
  done < "$sc/accounts.sacctmgr"
  start_ctld
}

sampler() {  # sampler OUTDIR: sprio/sshare/squeue at every half second (X.5), each block headed by its instant
  local out=$1 t
  while [[ -e "$out/.running" ]]; do
    sleep "$(date +%s.%N | awk '{ f = $1 - int($1); d = 1.5 - f; if (d > 1) d -= 1; print d }')"
    t=$(date +%s.%N)
    # The three queries run at once so that they see (almost) the same instant.
    sprio -h -o '%i|%r|%u|%Y|%a|%A|%f|%F|%j|%J|%p|%P|%q|%Q|%N' > "$out/.sprio" 2> /dev/null &
    sshare -a -P -o Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,LevelFS,FairShare > "$out/.sshare" 2> /dev/null &
    squeue -h -o '%i|%j|%T|%r|%Q' > "$out/.squeue" 2> /dev/null &
    wait
    # A sample equal to the previous one is written as "@ TIME =" (keeps the recorded files small).
    local f
    for f in sprio sshare squeue; do
      if [[ -e "$out/.$f.prev" ]] && cmp -s "$out/.$f" "$out/.$f.prev"; then
        echo "@ $t =" >> "$out/$f.txt"
      else
        { echo "@ $t"; cat "$out/.$f"; } >> "$out/$f.txt"
        mv "$out/.$f" "$out/.$f.prev"
      fi
    done
  done
  rm -f "$out"/.sprio* "$out"/.sshare* "$out"/.squeue*
}

run() {
  need_root
  local sc out
  sc="$(cd "$1" && pwd)"
  out=$2
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  [[ -f "$sc/sched.conf" && -f "$sc/accounts.sacctmgr" && -f "$sc/jobs.csv" ]] ||
    die "$sc: needs sched.conf, accounts.sacctmgr and jobs.csv"
  start
  log "scenario $(basename "$sc") -> $out"
  reset_for "$sc"
  cp "$SLURM_CONF" "$out/slurm.conf"
  sed "s#$ROOT#/var/lib/slurmtwin-oracle#g" -i "$out/slurm.conf"
  # What was run against slurmdbd, in order: the cluster first (it creates root's user association).
  { echo "add cluster oracle"; cat "$sc/accounts.sacctmgr"; } > "$out/accounts.sacctmgr"
  cp "$sc/jobs.csv" "$out/jobs.csv"

  # Trace start: the next whole second at least 3 s from now.
  local t0
  t0=$(($(date +%s) + 3))
  touch "$out/.running"
  # The sampler loops while .running exists: on any exit (a failure included) it ends too.
  # shellcheck disable=SC2064 # $out is expanded now, on purpose (a local of this function)
  trap "rm -f '$out/.running'" EXIT
  : > "$out/sprio.txt"
  : > "$out/sshare.txt"
  : > "$out/squeue.txt"
  sampler "$out" &
  local sampler_pid=$!
  : > "$out/submits.txt"
  local idx=0 off user acct part qos nodes cpus mem limit runtime dep now
  local -A ids=()  # jNNN -> the job id sbatch gave it (for the dependency column)
  while IFS=, read -r off user acct part qos nodes cpus mem limit runtime dep; do
    [[ -z $off || $off == \#* || $off == offset* ]] && continue
    idx=$((idx + 1))
    now=$(date +%s.%N)
    local wait
    wait=$(awk -v a="$t0" -v o="$off" -v n="$now" 'BEGIN { d = a + o - n; print (d > 0 ? d : 0) }')
    sleep "$wait"
    local name
    name=$(printf 'j%03d' "$idx")
    local id work="sleep $runtime"
    # A suspended `sleep` keeps counting wall time; a loop of 1 s sleeps does the work it was
    # given after a suspension, like a real job (scenarios with a file named work-loop).
    [[ -e "$sc/work-loop" ]] && work="for i in \$(seq $runtime); do sleep 1; done"
    # Optional 11th column: --dependency naming earlier jobs by jNNN (e.g. afterok:j001?afterany:j002).
    local depend=()
    if [[ -n ${dep:-} ]]; then
      local d=$dep ref
      for ref in $(grep -oE 'j[0-9]{3}' <<< "$dep"); do
        [[ -n ${ids[$ref]:-} ]] || die "$sc/jobs.csv: $name depends on $ref, which has no job id"
        d=${d//$ref/${ids[$ref]}}
      done
      depend=(--dependency="$d")
    fi
    id=$(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -J "$name" -A "$acct" \
      -p "$part" -q "$qos" -N "$nodes" -n "$cpus" --mem="${mem}M" -t "$limit" -o /dev/null \
      "${depend[@]}" -D /tmp --wrap "$work" 2>> "$out/sbatch.err" || echo REFUSED)
    ids[$name]=$id
    echo "$name $id $(date +%s.%N) $off" >> "$out/submits.txt"
  done < "$sc/jobs.csv"
  log "submitted $idx jobs; waiting for them to end"

  local limit_s=${ORACLE_MAX_SECONDS:-900} start_wait
  start_wait=$(date +%s)
  while [[ -n "$(squeue -h -o %i 2> /dev/null)" ]]; do
    (($(date +%s) - start_wait > limit_s)) && {
      log "still running after $limit_s s: cancelling"
      cancel_all
      break
    }
    sleep 2
  done
  sleep 2
  rm -f "$out/.running"
  wait "$sampler_pid" || true

  echo "trace_start $t0" > "$out/meta.txt"
  # Controller start and decay ticks from the log (iso8601_ms local time -> epoch s with ms).
  local ctld_start
  ctld_start=$(grep -m1 'Running as primary controller' "$ROOT/log/slurmctld.log" | sed -E 's/^\[([^]]+)\].*/\1/')
  echo "controller_start $(date -d "$ctld_start" +%s.%3N)" >> "$out/meta.txt"
  # Each run of the decay thread logs the Fair Tree walk from root (DebugFlags=Priority).
  grep -E '_ft_debug: +root \(root\)' "$ROOT/log/slurmctld.log" | sed -E 's/^\[([^]]+)\].*/\1/' |
    while read -r ts; do date -d "$ts" +%s.%3N; done > "$out/ticks.txt"
  grep -E 'sched: Allocate|backfill: Started|sched/backfill|preempt|Requeu|TIMEOUT|[Tt]ime limit' \
    "$ROOT/log/slurmctld.log" > "$out/slurmctld-events.log" || true
  sacct -M oracle -a -D -X -P -S "$(date -d @$((t0 - 600)) +%Y-%m-%dT%H:%M:%S)" -E now \
    --format=JobID,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,ElapsedRaw,TimelimitRaw,NNodes,ReqCPUS,AllocCPUS,ReqMem,State,Flags,Priority,NodeList \
    > "$out/sacct.txt"
  echo "slurm $(slurmctld -V | awk '{print $2}')" >> "$out/meta.txt"
  log "done: $(($(wc -l < "$out/sacct.txt") - 1)) sacct records, $(wc -l < "$out/ticks.txt") decay ticks"
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  reset) need_root; start; reset_for "$2" ;;
  run)
    [[ $# == 3 ]] || die "usage: oracle.sh run SCENARIO_DIR OUTDIR"
    run "$2" "$3"
    ;;
  all)  # all OUTROOT RUNS [SCENARIO_DIR...]: every scenario once, then again, RUNS times in all
    [[ $# -ge 3 ]] || die "usage: oracle.sh all OUTROOT RUNS [SCENARIO_DIR...]"
    outroot=$2 runs=$3
    shift 3
    scenarios=("$@")
    ((${#scenarios[@]})) || scenarios=("$HERE"/scenarios/*/)
    for k in $(seq 1 "$runs"); do
      for sc in "${scenarios[@]}"; do
        bash "$0" run "$sc" "$outroot/$(basename "$sc")/run$k" || log "FAILED: $sc run $k"
      done
    done
    ;;
  *) die "usage: oracle.sh {setup|start|run SCENARIO OUTDIR|all OUTROOT RUNS [SCENARIO...]|stop|status}" ;;
esac
