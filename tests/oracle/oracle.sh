#!/usr/bin/env bash
# Real Slurm 22.05 on this machine, as the oracle of the simulator (docs/fidelity.md).
#
#   oracle.sh setup                 install Debian packages, munge key, MariaDB data dir, users, bridge
#   oracle.sh start                 start munged, MariaDB, slurmdbd, the node namespaces (idempotent)
#   oracle.sh run SCENARIO OUTDIR   reset Slurm's state, load the scenario, replay its jobs, record
#   oracle.sh all OUTROOT RUNS [SCENARIO...]   every scenario once, then again, RUNS times in all
#   oracle.sh stop                  stop every daemon this script started (by its recorded PID)
#   oracle.sh status                what runs
#
# A scenario is a directory with
#   sched.conf         appended to conf/slurm.conf.in (priority, scheduler, preemption, partitions;
#                      GresTypes=... when its nodes have GRES)
#                      SelectType=... there replaces the template's SelectType and
#                      SelectTypeParameters lines (give both)
#   accounts.sacctmgr  sacctmgr commands, one a line
#   jobs.csv           one job a line, submitted as `sbatch --wrap "sleep RUNTIME"` (see below)
#   nodes.conf         optional: NodeName lines that replace the four default ones of
#                      conf/slurm.conf.in (n1-n4 with NodeAddr 10.77.0.11-14; other CPUs, memory,
#                      Features=..., Gres=...). One node a line, any names, each with its own
#                      NodeAddr=10.77.0.X (11 <= X <= 40): each runs its slurmd in a namespace there
#   gres.conf          optional: copied beside slurm.conf (e.g. `NodeName=n4 Name=gpu Count=2`)
#   topology.conf      optional: copied beside slurm.conf (for TopologyPlugin=topology/tree in sched.conf)
#   work-loop          optional: jobs run a loop of 1 s sleeps (suspended time is not work done)
#   admin.csv          optional: scontrol commands an admin runs during the trace (see below)
# jobs.csv has a header line; columns are found by name, in any order (lines starting with # are
# skipped, fields are plain: no quotes, so no commas inside a field):
#   offset           submit offset after the trace start, s                     (required)
#   user, account, partition, qos                     -> -A, -p, -q               (required)
#   cpus             tasks, one CPU each                 -> -n                    (required; may be
#                    empty when nodes and ntasks_per_node are given: -n is then not passed)
#   limit_min        time limit, whole minutes           -> -t                    (required)
#   runtime_s        what the job sleeps, s                                       (required)
#   nodes            node count -> -N; an empty cell (or no column): no -N
#   ntasks_per_node  -> --ntasks-per-node (empty: not given)
#   cpus_per_task    -> -c (CPUs per task; the job asks cpus x cpus_per_task CPUs); empty: not given
#   mem_mb           MB per node -> --mem=NM; mem_per_cpu_mb: MB per CPU -> --mem-per-cpu=NM; at
#                    most one of the two in a line, both empty: no memory option
#   gres             one GRES request, name[:type]:count per node -> --gres= (e.g. gpu:1)
#   constraint       -> --constraint= (node features joined by & or |)
#   dependency       --dependency naming earlier jobs jNNN by their line (afterok:j001?afterany:j002)
#   cancel_s         seconds after the trace start (>= offset) at which the job is cancelled with
#                    `scancel --state=PENDING` if it still pends then (a running or ended job is left
#                    alone); an empty cell (or no column): never. What happened is in cancels.txt.
#   reservation      -> --reservation=NAME (an advanced reservation of admin.csv); empty: none
#   exclusive        1 -> --exclusive (whole nodes); empty or 0: not given
#   nice             -> --nice=N (N >= 0: lowers the job's priority by N); empty: not given
#   begin_s          seconds after the trace start (>= offset) -> --begin=YYYY-MM-DDTHH:MM:SS, the
#                    job is not eligible before then; empty: not given
#   licenses         -> -L SPEC: name[:count] joined by ';' (slurmctld splits at ',' and ';'; a CSV
#                    field has no commas), e.g. matlab:2;ansys; empty: none
#   array            -> --array=SPEC: task ids as N, N-M, N-M:STEP, joined by ',', then an optional
#                    %MAX (at most MAX tasks run at once), e.g. 0-5%2; every task sleeps runtime_s.
#                    sacct lists each task as ID_TASK with the line's jNNN as its name
# admin.csv has the header line `offset,command` (lines starting with # are skipped); the offset is
# everything before the first comma, the command everything after it (commas allowed there: Flags=A,B):
#   offset           seconds after the trace start, the clock of jobs.csv's offsets; non-decreasing
#                    down the file. Lines of one offset run in file order, and before that offset's jobs.
#   command          run as root when its time comes; only `scontrol ...` (e.g. `scontrol create
#                    reservation ...`, `scontrol update nodename=n2 state=drain reason=maint`, `... state=
#                    resume`, `... state=down reason=x`). Split into words at blanks, no shell, no quotes
#                    (a reason is one word). @T+N@ is replaced by the local time (YYYY-MM-DDTHH:MM:SS; the
#                    harness runs with TZ=UTC) of the trace start + N s, for a reservation's StartTime/EndTime.
# Each command is logged to OUTDIR/admin-actions.txt as "OFFSET EPOCH RC COMMAND" (EPOCH: when it was
# started, fractional s; COMMAND with @T+N@ replaced), followed by its output lines (stdout and stderr),
# each as "> LINE". While admin.csv still has commands to run, or a reservation exists (pending or
# active), pending jobs are not taken for stuck (see below).
# A job sbatch refuses is "jNNN REFUSED" in submits.txt and its error lines are in sbatch.err as
# "jNNN: sbatch: error: ...". Jobs still pending when nothing else is left, for a reason that cannot
# change (a per-job limit, bad constraints, a dependency never satisfied), are cancelled after 10 s
# and listed with that reason in never-started.txt. Needs root. State lives in $ORACLE_ROOT
# (default /var/lib/slurmtwin-oracle); nothing under /etc/slurm is touched.
#
# After the jobs, OUTDIR/admin/ gets the files a real site's admin has, written by the Slurm commands
# themselves while slurmctld and slurmdbd still run (fixtures for the project's importers; the harness
# state path in them is replaced by /var/lib/slurmtwin-oracle, as in slurm.conf): sacctmgr-dump.cfg
# (`sacctmgr dump`), sacctmgr-show-{qos,assoc,assoc-tree,event,reservation}.txt (-P; event: All_Time,
# node DOWN/DRAIN intervals included; reservation: every reservation with the fields 22.05 has),
# scontrol-show-{config,nodes,partition,reservation}.txt, and sacct.txt / sacct-local.txt: `sacct -a -P
# -D` with the columns of admin_export below, steps included (no -X), as a user runs it, with TZ=UTC
# and TZ=Europe/Berlin (sacct prints local time); admin/README says which is which. With an admin.csv,
# scontrol-show-reservation.txt is taken right after its last command ran (an ended reservation is gone
# from scontrol), not at the end.
set -euo pipefail
export TZ=UTC  # sacct and the log's timestamps are read back as UTC

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${ORACLE_ROOT:-/var/lib/slurmtwin-oracle}"
export SLURM_CONF="$ROOT/etc/slurm.conf"
BRIDGE=br-storacle
NET=10.77.0
# The nodes of the scenario at hand (its nodes.conf's, else the template's) and their addresses.
NODES=(n1 n2 n3 n4)
declare -A NODE_ADDR=([n1]=$NET.11 [n2]=$NET.12 [n3]=$NET.13 [n4]=$NET.14)
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
  log "setup done ($ROOT)"
}

# Linux users named in a sacctmgr script ("add user NAME ...").
ensure_users() {
  local name
  # "add user NAME ..." or, as sacctmgr also takes it, "add user name=NAME ...".
  for name in $(grep -ioE '^\s*(sacctmgr\s+(-i\s+)?)?(add|create)\s+user\s+(name=)?[a-z0-9_]+' "$1" | awk '{print $NF}' | sed 's/^name=//I'); do
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
  local n old
  # Namespaces of another scenario's nodes go: one could hold an address a node here is given.
  for old in /run/netns/st-*; do
    [[ -e $old && -z ${NODE_ADDR[${old#/run/netns/st-}]:-} ]] || continue
    ns_del "${old#/run/netns/st-}"
  done
  for n in "${NODES[@]}"; do
    local ns="st-$n" veth="vst$n" addr=${NODE_ADDR[$n]}
    # A namespace left by a scenario that gave this node another address is made anew.
    if [[ -e "/run/netns/$ns" ]] && ! ip -n "$ns" -4 addr show dev eth0 | grep -q " $addr/24 "; then
      ns_del "$n"
    fi
    if [[ ! -e "/run/netns/$ns" ]]; then
      ip netns add "$ns"
      ip link add "$veth" type veth peer name eth0 netns "$ns"
      ip link set "$veth" master "$BRIDGE" up
      ip -n "$ns" addr add "$addr/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
    fi
  done
}

# ns_del NODE: the node's namespace (st-NODE) and its veth on the bridge (vstNODE; gone with the
# namespace's end of the pair as a rule).
ns_del() {
  ip netns del "st-$1"
  ip link del "vst$1" 2> /dev/null || true
}

net_down() {
  local ns
  for ns in /run/netns/st-*; do
    [[ -e $ns ]] && ns_del "${ns#/run/netns/st-}"
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
  net_up
  for n in "${NODES[@]}"; do
    mkdir -p "$ROOT/spool/$n" && chown slurm:slurm "$ROOT/spool/$n"
    spawn "slurmd-$n" nsenter --net="/run/netns/st-$n" env SLURM_CONF="$SLURM_CONF" slurmd -D -N "$n"
  done
  # Every node registered: idle, or refused at registration (INVALID_REG, e.g. slurmd reports fewer
  # GRES than slurm.conf gives: slurmctld keeps it drained, as on a real site with that gres.conf).
  wait_for 90 "registered nodes" bash -c "[[ \$(scontrol -o show node | grep -cE 'State=IDLE |INVALID_REG') == ${#NODES[@]} ]]"
}

cancel_all() { squeue -h -o %i 2> /dev/null | xargs -r scancel 2> /dev/null || true; }

stop_slurm() {
  local f
  if alive slurmctld; then cancel_all; fi
  stop_one slurmctld
  # Every slurmd started, whichever scenario's nodes they were.
  for f in "$PIDS"/slurmd-*; do [[ -e $f ]] && stop_one "$(basename "$f")"; done
  return 0
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
# A scenario's nodes.conf: NodeName lines (and comments), one node each, every node at its own
# address NET.X (11 <= X <= 40). Sets NODES (in the file's order) and NODE_ADDR.
check_nodes_conf() {
  local f=$1 line name addr addr_re="[[:space:]]NodeAddr=(${NET//./\\.}\\.([0-9]+))([[:space:]]|$)"
  local -A seen_addr=()
  NODES=()
  NODE_ADDR=()
  while IFS= read -r line || [[ -n $line ]]; do
    [[ -z "${line// /}" || $line == \#* ]] && continue
    [[ $line =~ ^NodeName=([a-z][a-z0-9]{0,11})[[:space:]] ]] ||
      die "$f: only NodeName lines (one node each, a name of at most 12 lower-case letters and digits) and # comments: $line"
    name=${BASH_REMATCH[1]}
    [[ -z ${NODE_ADDR[$name]:-} ]] || die "$f: node $name twice"
    [[ $line =~ $addr_re ]] && ((BASH_REMATCH[2] >= 11 && BASH_REMATCH[2] <= 40)) ||
      die "$f: $name needs NodeAddr=$NET.X with 11 <= X <= 40"
    addr=${BASH_REMATCH[1]}
    [[ -z ${seen_addr[$addr]:-} ]] || die "$f: $name and ${seen_addr[$addr]} both at $addr"
    seen_addr[$addr]=$name
    NODES+=("$name")
    NODE_ADDR[$name]=$addr
  done < "$f"
  ((${#NODES[@]})) || die "$f: no NodeName line"
}

# read_jobs JOBS_CSV: checks a scenario's jobs.csv (its columns by the header's names) and fills
# JOB_OFF, JOB_USER, JOB_RUNTIME, JOB_DEP, JOB_CANCEL (cancel_s, empty: none), JOB_BEGIN (begin_s,
# empty: none) and JOB_OPTS (sbatch options, one word each) per job.
JOB_COLUMNS=" offset user account partition qos nodes cpus ntasks_per_node cpus_per_task mem_mb mem_per_cpu_mb limit_min runtime_s gres constraint dependency cancel_s reservation array exclusive nice begin_s licenses "
read_jobs() {
  local f=$1 line lno=0 c k
  local -A col=()
  local -a field=()
  JOB_OFF=() JOB_USER=() JOB_RUNTIME=() JOB_DEP=() JOB_CANCEL=() JOB_BEGIN=() JOB_OPTS=()
  # cell VAR NAME: the trimmed field of column NAME in this line (empty if no such column).
  cell() {
    local v=""
    [[ -n ${col[$2]:-} ]] && v=${field[${col[$2]}]:-}
    v="${v#"${v%%[![:space:]]*}"}"
    v="${v%"${v##*[![:space:]]}"}"
    printf -v "$1" '%s' "$v"
  }
  bad() { die "$f:$lno: $1: $2"; }
  uint() {  # uint VALUE COLUMN MIN: VALUE is an integer >= MIN
    if [[ ! $1 =~ ^(0|[1-9][0-9]{0,8})$ ]] || (($1 < $3)); then bad "$2" "'$1' is not an integer >= $3"; fi
  }
  while IFS= read -r line || [[ -n $line ]]; do
    lno=$((lno + 1))
    line=${line%$'\r'}
    [[ -z "${line//[[:space:]]/}" || $line == \#* ]] && continue
    [[ $line != *\"* ]] || bad line "quoted fields are not supported"
    IFS=, read -ra field <<< "$line,"  # the extra comma keeps a trailing empty field
    if ((${#col[@]} == 0)); then
      for k in "${!field[@]}"; do
        c=${field[$k]//[[:space:]]/}
        [[ -z $c && $k == $((${#field[@]} - 1)) ]] && continue
        [[ $JOB_COLUMNS == *" $c "* ]] || bad header "unknown column '$c' (known:$JOB_COLUMNS)"
        [[ -z ${col[$c]:-} ]] || bad header "column '$c' twice"
        col[$c]=$k
      done
      for c in offset user account partition qos cpus limit_min runtime_s; do
        [[ -n ${col[$c]:-} ]] || bad header "missing column '$c'"
      done
      continue
    fi
    local off user acct part qos nodes cpus tpn cpt mem mpc limit runtime gres cons dep cancel resv array excl nice begin lic
    cell off offset; cell user user; cell acct account; cell part partition; cell qos qos
    cell nodes nodes; cell cpus cpus; cell tpn ntasks_per_node; cell cpt cpus_per_task; cell mem mem_mb
    cell mpc mem_per_cpu_mb
    cell limit limit_min; cell runtime runtime_s; cell gres gres; cell cons constraint; cell dep dependency
    cell cancel cancel_s; cell resv reservation; cell array array; cell excl exclusive; cell nice nice
    cell begin begin_s; cell lic licenses
    for c in off user acct part qos nodes cpus tpn cpt mem mpc limit runtime gres cons dep cancel resv array excl nice begin lic; do
      [[ ${!c} != *[[:space:]]* ]] || bad "$c" "no blanks inside a field"
    done
    uint "$off" offset 0
    for c in user acct part qos; do [[ -n ${!c} ]] || bad "$c" "empty"; done
    local opts="-A $acct -p $part -q $qos"
    [[ -z $nodes ]] || { uint "$nodes" nodes 1; opts+=" -N $nodes"; }
    [[ -z $tpn ]] || { uint "$tpn" ntasks_per_node 1; opts+=" --ntasks-per-node=$tpn"; }
    [[ -z $cpt ]] || { uint "$cpt" cpus_per_task 1; opts+=" -c $cpt"; }
    if [[ -n $cpus ]]; then
      uint "$cpus" cpus 1
      [[ -z $nodes ]] || ((cpus >= nodes)) || bad cpus "needs cpus >= nodes"
      opts+=" -n $cpus"
    else
      [[ -n $nodes && -n $tpn ]] || bad cpus "empty (allowed only with nodes and ntasks_per_node)"
    fi
    [[ -z $mem || -z $mpc ]] || bad mem_per_cpu_mb "give mem_mb or mem_per_cpu_mb, not both"
    [[ -z $mem ]] || { uint "$mem" mem_mb 0; opts+=" --mem=${mem}M"; }
    [[ -z $mpc ]] || { uint "$mpc" mem_per_cpu_mb 1; opts+=" --mem-per-cpu=${mpc}M"; }
    uint "$limit" limit_min 1
    opts+=" -t $limit"
    uint "$runtime" runtime_s 0
    if [[ -n $gres ]]; then
      [[ $gres =~ ^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)?:[1-9][0-9]*$ ]] || bad gres "'$gres' is not name[:type]:count"
      opts+=" --gres=$gres"
    fi
    [[ -z $cons ]] || opts+=" --constraint=$cons"
    if [[ -n $lic ]]; then
      local one='[A-Za-z0-9_.@-]+(:(0|[1-9][0-9]{0,5}))?'
      [[ $lic =~ ^$one(\;$one)*$ ]] || bad licenses "'$lic' is not name[:count] joined by ';'"
      opts+=" -L $lic"
    fi
    if [[ -n $resv ]]; then
      [[ $resv =~ ^[A-Za-z0-9_.-]+$ ]] || bad reservation "'$resv' is not a reservation name"
      opts+=" --reservation=$resv"
    fi
    if [[ -n $array ]]; then
      local range='(0|[1-9][0-9]{0,5})(-(0|[1-9][0-9]{0,5})(:[1-9][0-9]{0,5})?)?'
      [[ $array =~ ^$range(,$range)*(%[1-9][0-9]{0,5})?$ ]] || bad array "'$array' is not N[-M[:STEP]][,...][%MAX]"
      opts+=" --array=$array"
    fi
    [[ -z $excl || $excl == 0 || $excl == 1 ]] || bad exclusive "'$excl' is not 1, 0 or empty"
    [[ $excl != 1 ]] || opts+=" --exclusive"
    [[ -z $nice ]] || { uint "$nice" nice 0; opts+=" --nice=$nice"; }
    [[ -z $cancel ]] || uint "$cancel" cancel_s "$off"
    [[ -z $begin ]] || uint "$begin" begin_s "$off"
    JOB_OFF+=("$off") JOB_USER+=("$user") JOB_RUNTIME+=("$runtime") JOB_DEP+=("$dep") JOB_CANCEL+=("$cancel")
    JOB_BEGIN+=("$begin")
    JOB_OPTS+=("$opts")
  done < "$f"
  ((${#col[@]})) || die "$f: no header line"
}

# read_admin ADMIN_CSV: checks a scenario's admin.csv (header `offset,command`) and fills ADMIN_OFF and
# ADMIN_CMD (the command as written, @T+N@ not yet replaced) per line.
read_admin() {
  local f=$1 line lno=0 off cmd prev=0 header=0 rest
  ADMIN_OFF=() ADMIN_CMD=()
  while IFS= read -r line || [[ -n $line ]]; do
    lno=$((lno + 1))
    line=${line%$'\r'}
    [[ -z "${line//[[:space:]]/}" || $line == \#* ]] && continue
    if ((header == 0)); then
      [[ ${line//[[:space:]]/} == offset,command ]] || die "$f:$lno: header: expected 'offset,command'"
      header=1
      continue
    fi
    [[ $line == *,* ]] || die "$f:$lno: line: expected OFFSET,COMMAND"
    off=${line%%,*}
    cmd=${line#*,}
    off="${off//[[:space:]]/}"
    cmd="${cmd#"${cmd%%[![:space:]]*}"}"
    cmd="${cmd%"${cmd##*[![:space:]]}"}"
    if [[ ! $off =~ ^(0|[1-9][0-9]{0,8})$ ]]; then die "$f:$lno: offset: '$off' is not an integer >= 0"; fi
    ((off >= prev)) || die "$f:$lno: offset: $off is before the line above ($prev): keep the file in time order"
    prev=$off
    [[ $cmd == "scontrol "* ]] || die "$f:$lno: command: only 'scontrol ...' commands: $cmd"
    [[ $cmd != *[\"\'\;\&\|\<\>\`\$\\]* ]] || die "$f:$lno: command: no quotes or shell characters: $cmd"
    # Every @ must belong to a @T+N@ placeholder.
    rest=$cmd
    while [[ $rest =~ @T\+(0|[1-9][0-9]{0,8})@ ]]; do rest=${rest/"${BASH_REMATCH[0]}"/}; done
    [[ $rest != *@* ]] || die "$f:$lno: command: a placeholder is @T+N@ (N whole seconds): $cmd"
    ADMIN_OFF+=("$off") ADMIN_CMD+=("$cmd")
  done < "$f"
  ((header)) || die "$f: no header line"
}

# A scenario's gres.conf, @ROOT@ replaced, beside slurm.conf. slurmd 22.05 drops a GPU without a
# File= ("Removing file-less GPU ... from final GRES list", the node is then drained: "gres/gpu count
# reported lower than configured") and wants each File to be a device: every File= must be under
# @ROOT@/dev/, where stand-ins are made (character devices 1:3, what /dev/null is; with task/none
# nothing opens or constrains them). File=@ROOT@/dev/gpu[0-1] names two.
install_gres_conf() {
  local f=$1 spec base lo hi i
  mkdir -p "$ROOT/dev"
  for spec in $(grep -oE 'File=[^[:space:]]+' "$f" | cut -d= -f2-); do
    [[ $spec == @ROOT@/dev/* ]] || die "$f: File=$spec: only @ROOT@/dev/NAME or @ROOT@/dev/NAME[A-B] (stand-in devices)"
    spec=${spec#@ROOT@/dev/}
    if [[ $spec =~ ^([a-z_]+)\[([0-9]+)-([0-9]+)\]$ ]]; then
      base=${BASH_REMATCH[1]} lo=${BASH_REMATCH[2]} hi=${BASH_REMATCH[3]}
    elif [[ $spec =~ ^([a-z_]+)([0-9]+)$ ]]; then
      base=${BASH_REMATCH[1]} lo=${BASH_REMATCH[2]} hi=${BASH_REMATCH[2]}
    else
      die "$f: File=@ROOT@/dev/$spec: expected NAME<N> or NAME[A-B]"
    fi
    for ((i = lo; i <= hi; i++)); do
      [[ -c "$ROOT/dev/$base$i" ]] || mknod "$ROOT/dev/$base$i" c 1 3
    done
  done
  sed "s#@ROOT@#$ROOT#g" "$f" > "$ROOT/etc/gres.conf"
}

# Fresh accounting database, fresh controller state (no usage, no decay history, job ids from 1),
# the scenario's slurm.conf and associations.
reset_for() {
  local sc=$1
  stop_slurm
  stop_one slurmdbd
  mysql_q "DROP DATABASE IF EXISTS slurm_acct_db;"
  rm -rf "${ROOT:?}/state" && mkdir -p "$ROOT/state" && chown slurm:slurm "$ROOT/state"
  local nodes_conf=""
  NODES=(n1 n2 n3 n4)
  NODE_ADDR=([n1]=$NET.11 [n2]=$NET.12 [n3]=$NET.13 [n4]=$NET.14)
  [[ -f "$sc/nodes.conf" ]] && nodes_conf="$sc/nodes.conf" && check_nodes_conf "$nodes_conf"
  # A sched.conf that sets SelectType (e.g. select/cons_res) replaces the template's two Select lines.
  local own_select=""
  grep -qE "^SelectType=" "$sc/sched.conf" && own_select=1
  {
    # The scenario's nodes.conf (if any) stands where the default NodeName lines stood.
    sed -e "s#@ROOT@#$ROOT#g" -e "s#@HOST@#$(hostname -s)#g" "$HERE/conf/slurm.conf.in" |
      awk -v nc="$nodes_conf" -v name="$(basename "$sc")" -v own_select="$own_select" '
        /^SelectType(Parameters)?=/ && own_select { next }
        /^NodeName=/ && nc != "" {
          if (!done) {
            print "# ---- scenario " name ": nodes.conf"
            while ((getline l < nc) > 0) print l
            print "# ---- end of nodes.conf"
            done = 1
          }
          next
        }
        { print }'
    echo "# ---- scenario $(basename "$sc"): sched.conf"
    cat "$sc/sched.conf"
  } > "$SLURM_CONF"
  # gres.conf beside slurm.conf (slurmd and slurmctld read it from there); none left from before.
  rm -f "$ROOT/etc/gres.conf"
  [[ -f "$sc/gres.conf" ]] && install_gres_conf "$sc/gres.conf"
  rm -f "$ROOT/etc/topology.conf"
  [[ -f "$sc/topology.conf" ]] && cp "$sc/topology.conf" "$ROOT/etc/topology.conf"
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

# canceller OUTDIR NAME ID EPOCH CANCEL_S: at EPOCH, cancels job ID if it still pends (the cancel_s
# column) and writes one line to cancels.txt: NAME ID EPOCH_DONE CANCEL_S, then "cancelled" or "left
# STATE" (the state squeue showed: RUNNING, COMPLETED, gone when it had left the queue).
canceller() {
  local out=$1 name=$2 id=$3 at=$4 cancel_s=$5 state
  sleep "$(awk -v a="$at" -v n="$(date +%s.%N)" 'BEGIN { d = a - n; print (d > 0 ? d : 0) }')"
  [[ -e "$out/.running" ]] || return 0  # the run ended (failed) in the meantime
  state=$(squeue -h -j "$id" -o %T 2> /dev/null || true)
  if [[ $state == PENDING ]]; then
    # --state=PENDING: should it have started since the squeue above, scancel leaves it alone.
    scancel --state=PENDING "$id" 2>> "$out/cancels.err" || true
    echo "$name $id $(date +%s.%N) $cancel_s cancelled" >> "$out/cancels.txt"
  else
    echo "$name $id $(date +%s.%N) $cancel_s left ${state:-gone}" >> "$out/cancels.txt"
  fi
}

# admin_run OUTDIR T0 UPTO: runs the admin.csv lines not run yet whose offset is <= UPTO (all: every
# one left), each at T0 + its offset, as root; logs each to admin-actions.txt (see the header). After
# the last line: `scontrol show reservation` into OUTDIR/.admin-resv (admin_export keeps it).
ADMIN_NEXT=0
admin_run() {
  local out=$1 t0=$2 upto=$3 off cmd ph iso at rc
  local -a words
  while ((ADMIN_NEXT < ${#ADMIN_OFF[@]})); do
    off=${ADMIN_OFF[$ADMIN_NEXT]}
    [[ $upto == all ]] || ((off <= upto)) || break
    sleep "$(awk -v a="$t0" -v o="$off" -v n="$(date +%s.%N)" 'BEGIN { d = a + o - n; print (d > 0 ? d : 0) }')"
    [[ -e "$out/.running" ]] || return 0  # the run ended (failed) in the meantime
    cmd=${ADMIN_CMD[$ADMIN_NEXT]}
    while [[ $cmd =~ @T\+([0-9]+)@ ]]; do
      ph=${BASH_REMATCH[0]}
      iso=$(date -d @$((t0 + BASH_REMATCH[1])) +%Y-%m-%dT%H:%M:%S)
      cmd=${cmd//"$ph"/$iso}
    done
    read -ra words <<< "$cmd"
    at=$(date +%s.%N)
    rc=0
    "${words[@]}" > "$out/.admin.out" 2>&1 < /dev/null || rc=$?
    { echo "$off $at $rc $cmd"; sed 's/^/> /' "$out/.admin.out"; } >> "$out/admin-actions.txt"
    rm -f "$out/.admin.out"
    ((rc == 0)) || log "admin.csv: '$cmd' failed (exit $rc): see admin-actions.txt"
    ADMIN_NEXT=$((ADMIN_NEXT + 1))
    if ((ADMIN_NEXT == ${#ADMIN_OFF[@]})); then
      scontrol show reservation > "$out/.admin-resv" 2>&1 || log "scontrol show reservation failed"
    fi
  done
}

# admin_export OUTDIR T0: OUTDIR/admin/, the files a real site's admin has (see the header), written by
# the Slurm commands themselves while slurmctld and slurmdbd run, so that the project's importers are
# tested on real 22.05 output rather than on what we believe it prints.
# (sacct 22.05 has no Restarts field: "Invalid field requested"; it is left out.)
ADMIN_SACCT_FORMAT=JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,NNodes,ReqNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,NodeList,Priority,Flags,Constraints,Reservation,ReservationId,SubmitLine
# Every field sacctmgr 22.05 has for reservations (Assocs: association ids). Naming a format also drops
# the default time window of a bare `show reservation` (since yesterday 00:00, up to now: a reservation
# still to start is left out), so every reservation is listed.
ADMIN_RESV_FORMAT=Cluster,Name,ID,TimeStart,TimeEnd,NodeNames,Flags,Associations,TRES,UnusedWall
ADMIN_TREE_FORMAT=Cluster,Account,User,Partition,ParentName,Share,Priority,GrpJobs,GrpJobsAccrue,GrpTRES,GrpSubmit,GrpWall,MaxJobs,MaxJobsAccrue,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,QOS,DefaultQOS
# Every QOS column the import reads (traces/sacctmgr.hpp kQosTableFormat; the default lacks some).
ADMIN_QOS_FORMAT=Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpJobsAccrue,GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxJobsAccruePU,MaxSubmitPU,MaxTRESRunMinsPU,MaxTRESPA,MaxJobsPA,MaxJobsAccruePA,MaxSubmitPA,MaxTRESRunMinsPA,MinTRES
ADMIN_LOCAL_TZ=Europe/Berlin
admin_export() {
  local out=$1/admin t0=$2 tmp
  rm -rf "$out"
  mkdir -p "$out"
  # sacctmgr (as root) writes the dump file itself, overwriting one that exists, and echoes each line
  # to stderr as "sacctmgr: LINE"; the file (its last line has no newline) is what a site has.
  tmp=$(mktemp -d)
  sacctmgr -i dump oracle file="$tmp/dump.cfg" > "$tmp/dump.out" 2>&1 ||
    log "sacctmgr dump failed: $(tail -1 "$tmp/dump.out")"
  if [[ -f "$tmp/dump.cfg" ]]; then cp "$tmp/dump.cfg" "$out/sacctmgr-dump.cfg"; fi
  rm -rf "$tmp"
  # admin_to FILE CMD...: CMD's output into FILE; a failure is logged (the run's own records stand).
  admin_to() {
    local f=$1
    shift
    "$@" > "$out/$f" 2> "$out/.err" || log "admin/$f: '$*' failed: $(tail -1 "$out/.err")"
    rm -f "$out/.err"
  }
  admin_to sacctmgr-show-qos.txt sacctmgr -P show qos
  admin_to sacctmgr-show-qos-format.txt sacctmgr -P show qos format="$ADMIN_QOS_FORMAT"
  admin_to sacctmgr-show-assoc.txt sacctmgr -P show assoc
  admin_to sacctmgr-show-assoc-tree.txt sacctmgr -P show assoc tree withdeleted format="$ADMIN_TREE_FORMAT"
  # `show event all` is refused by 22.05 ("Unknown event type: 'all'"); All_Time lists every event.
  admin_to sacctmgr-show-event.txt sacctmgr -P show event All_Time
  admin_to scontrol-show-config.txt scontrol show config
  admin_to scontrol-show-nodes.txt scontrol show nodes
  admin_to scontrol-show-partition.txt scontrol show partition
  admin_to sacctmgr-show-reservation.txt sacctmgr -P show reservation format="$ADMIN_RESV_FORMAT"
  # With an admin.csv: as right after its last command (an ended reservation is gone from scontrol).
  local resv_when="at the end of the run"
  if [[ -f "$1/.admin-resv" ]]; then
    mv "$1/.admin-resv" "$out/scontrol-show-reservation.txt"
    resv_when="right after the last command of admin.csv ran, not at the end"
  else
    admin_to scontrol-show-reservation.txt scontrol show reservation
  fi
  # sacct as a user runs it: every run (-D), steps included (no -X), times in the command's local time
  # zone (-S is read in that zone too).
  local tz file
  for tz in UTC "$ADMIN_LOCAL_TZ"; do
    file=sacct.txt
    [[ $tz == UTC ]] || file=sacct-local.txt
    admin_to "$file" env TZ="$tz" sacct -M oracle -a -P -D -S "$(TZ=$tz date -d @$((t0 - 600)) +%Y-%m-%dT%H:%M:%S)" \
      -E now -o "$ADMIN_SACCT_FORMAT"
  done
  sed -i "s#$ROOT#/var/lib/slurmtwin-oracle#g" "$out"/*
  cat > "$out/README" << EOF
Written by tests/oracle/oracle.sh (admin_export) after the jobs of this run, while real Slurm
$(slurmctld -V | awk '{print $2}') (cluster oracle) still ran; the harness state path is replaced by
/var/lib/slurmtwin-oracle.
sacctmgr-dump.cfg              sacctmgr -i dump oracle file=...
sacctmgr-show-qos.txt          sacctmgr -P show qos
sacctmgr-show-qos-format.txt   sacctmgr -P show qos format=$ADMIN_QOS_FORMAT
sacctmgr-show-assoc.txt        sacctmgr -P show assoc
sacctmgr-show-assoc-tree.txt   sacctmgr -P show assoc tree withdeleted format=$ADMIN_TREE_FORMAT
sacctmgr-show-event.txt        sacctmgr -P show event All_Time
sacctmgr-show-reservation.txt  sacctmgr -P show reservation format=$ADMIN_RESV_FORMAT
scontrol-show-*.txt            scontrol show config / nodes / partition / reservation
scontrol-show-reservation.txt  taken $resv_when
sacct.txt                      TZ=UTC sacct -M oracle -a -P -D -S <trace start - 600 s> -E now -o $ADMIN_SACCT_FORMAT
sacct-local.txt                the same with TZ=$ADMIN_LOCAL_TZ (its times, -S included, in that zone)
trace start: $t0 ($(date -u -d @"$t0" +%Y-%m-%dT%H:%M:%SZ))
EOF
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
  read_jobs "$sc/jobs.csv"  # before anything starts: a bad line fails here
  ADMIN_OFF=() ADMIN_CMD=()
  [[ -f "$sc/admin.csv" ]] && read_admin "$sc/admin.csv"
  start
  log "scenario $(basename "$sc") -> $out"
  reset_for "$sc"
  cp "$SLURM_CONF" "$out/slurm.conf"
  sed "s#$ROOT#/var/lib/slurmtwin-oracle#g" -i "$out/slurm.conf"
  # What was run against slurmdbd, in order: the cluster first (it creates root's user association).
  { echo "add cluster oracle"; cat "$sc/accounts.sacctmgr"; } > "$out/accounts.sacctmgr"
  cp "$sc/jobs.csv" "$out/jobs.csv"
  rm -f "$out/admin.csv" "$out/admin-actions.txt" "$out/.admin-resv"
  if [[ -f "$sc/admin.csv" ]]; then
    cp "$sc/admin.csv" "$out/admin.csv"
    : > "$out/admin-actions.txt"
  fi
  # The scenario's node lines are in slurm.conf already; its gres.conf as slurmd read it.
  rm -f "$out/gres.conf"
  if [[ -f "$ROOT/etc/gres.conf" ]]; then
    sed "s#$ROOT#/var/lib/slurmtwin-oracle#g" "$ROOT/etc/gres.conf" > "$out/gres.conf"
  fi
  rm -f "$out/topology.conf"
  [[ -f "$ROOT/etc/topology.conf" ]] && cp "$ROOT/etc/topology.conf" "$out/topology.conf"

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
  : > "$out/sbatch.err"
  rm -f "$out/cancels.txt" "$out/cancels.err"
  local cancellers=()  # PIDs of the canceller of each job with a cancel_s
  local idx=0 k now
  local -A ids=()  # jNNN -> the job id sbatch gave it (for the dependency column)
  for ((k = 0; k < ${#JOB_OFF[@]}; k++)); do
    idx=$((k + 1))
    local off=${JOB_OFF[$k]} user=${JOB_USER[$k]} dep=${JOB_DEP[$k]} runtime=${JOB_RUNTIME[$k]}
    admin_run "$out" "$t0" "$off"  # admin.csv lines up to this offset first
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
    # The dependency column names earlier jobs by jNNN (e.g. afterok:j001?afterany:j002).
    local depend=()
    if [[ -n $dep ]]; then
      local d=$dep ref
      for ref in $(grep -oE 'j[0-9]{3}' <<< "$dep"); do
        [[ -n ${ids[$ref]:-} ]] || die "$sc/jobs.csv: $name depends on $ref, which has no job id"
        d=${d//$ref/${ids[$ref]}}
      done
      depend=(--dependency="$d")
    fi
    local opts=()
    read -ra opts <<< "${JOB_OPTS[$k]}"
    # begin_s: the trace start + N s as local time (the harness runs with TZ=UTC), whole seconds.
    [[ -z ${JOB_BEGIN[$k]} ]] || opts+=(--begin="$(date -d "@$((t0 + JOB_BEGIN[$k]))" +%Y-%m-%dT%H:%M:%S)")
    id=$(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -J "$name" "${opts[@]}" \
      -o /dev/null "${depend[@]}" -D /tmp --wrap "$work" 2> "$out/.sbatch.err" || echo REFUSED)
    # What sbatch said (errors of a refusal, warnings of an accepted job), each line named by the job.
    sed "s/^/$name: /" "$out/.sbatch.err" >> "$out/sbatch.err"
    rm -f "$out/.sbatch.err"
    [[ $id =~ ^[0-9]+$ ]] || id=REFUSED
    ids[$name]=$id
    echo "$name $id $(date +%s.%N) $off" >> "$out/submits.txt"
    [[ $id == REFUSED ]] && log "$name refused by sbatch: $(grep "^$name: " "$out/sbatch.err" | tail -1)"
    local cancel=${JOB_CANCEL[$k]}
    if [[ -n $cancel && $id != REFUSED ]]; then
      canceller "$out" "$name" "$id" "$((t0 + cancel))" "$cancel" &
      cancellers+=($!)
    elif [[ -n $cancel ]]; then
      echo "$name REFUSED - $cancel left refused" >> "$out/cancels.txt"
    fi
  done
  log "submitted $idx jobs; waiting for them to end"
  # The admin.csv lines after the last job's offset, in the background.
  local admin_pid=""
  if ((ADMIN_NEXT < ${#ADMIN_OFF[@]})); then
    admin_run "$out" "$t0" all &
    admin_pid=$!
  fi

  # Until no job is left. When every job left has pended for 10 s with nothing running, suspended,
  # waiting for a begin time or for a dependency that may still be met (a per-job limit, a bad
  # constraint, a dependency never satisfied: nothing will change), they are listed with their reason in never-started.txt and cancelled.
  local limit_s=${ORACLE_MAX_SECONDS:-900} start_wait stuck=0 q
  start_wait=$(date +%s)
  : > "$out/never-started.txt"
  while :; do
    q=$(squeue -h -o '%j|%i|%T|%r' 2> /dev/null) || q="?"
    [[ -z $q ]] && break
    # (Dependency may still be met later, by time: after:jNNN+MIN; DependencyNeverSatisfied may not.)
    # (A job that waits for its cancel_s may still be cancelled: not stuck while a canceller waits.)
    local waiting=0 p
    for p in "${cancellers[@]}"; do kill -0 "$p" 2> /dev/null && waiting=1; done
    # (Nor while admin.csv has commands left, or a reservation is still to start or end.)
    [[ -n $admin_pid ]] && kill -0 "$admin_pid" 2> /dev/null && waiting=1
    scontrol -o show reservation 2> /dev/null | grep -q '^ReservationName=' && waiting=1
    if ((waiting == 0)) && [[ $q != "?" ]] && ! grep -qvE '^[^|]*\|[^|]*\|PENDING\|' <<< "$q" && ! grep -qE '\|(BeginTime|Dependency)$' <<< "$q"; then
      stuck=$((stuck + 1))
    else
      stuck=0
    fi
    if ((stuck > 5)); then
      tr '|' ' ' <<< "$q" | awk '{ r = $4; for (i = 5; i <= NF; i++) r = r " " $i; print $1, $2, r }' |
        sort > "$out/never-started.txt"
      log "$(wc -l < "$out/never-started.txt") jobs can never start: $(awk '{print $1 "(" $3 ")"}' "$out/never-started.txt" | tr '\n' ' ')- cancelling"
      cancel_all
      while [[ -n "$(squeue -h -o %i 2> /dev/null)" ]]; do sleep 1; done
      break
    fi
    (($(date +%s) - start_wait > limit_s)) && {
      log "still running after $limit_s s: cancelling"
      cancel_all
      break
    }
    sleep 2
  done
  sleep 2
  [[ -z $admin_pid ]] || wait "$admin_pid" || true  # the admin.csv lines left still run, at their time
  rm -f "$out/.running"
  wait "$sampler_pid" || true
  for p in "${cancellers[@]}"; do wait "$p" || true; done
  [[ -s "$out/cancels.err" ]] || rm -f "$out/cancels.err"

  echo "trace_start $t0" > "$out/meta.txt"
  # Controller start and decay ticks from the log (iso8601_ms local time -> epoch s with ms).
  local ctld_start
  ctld_start=$(grep -m1 'Running as primary controller' "$ROOT/log/slurmctld.log" | sed -E 's/^\[([^]]+)\].*/\1/')
  echo "controller_start $(date -d "$ctld_start" +%s.%3N)" >> "$out/meta.txt"
  # Each run of the decay thread logs the Fair Tree walk from root (DebugFlags=Priority); without Fair
  # Tree (NO_FAIR_TREE, DEPTH_OBLIVIOUS) it logs the usage of each account under root, in the same
  # millisecond: the first line of each such group is the run.
  local tick_re='_ft_debug: +root \(root\)'
  grep -qE "$tick_re" "$ROOT/log/slurmctld.log" ||
    tick_re='_priority_p_set_assoc_usage_debug: Normalized usage for account [^ ]+ off root\(root\)'
  grep -E "$tick_re" "$ROOT/log/slurmctld.log" | sed -E 's/^\[([^]]+)\].*/\1/' |
    while read -r ts; do date -d "$ts" +%s.%3N; done |
    awk 'NR == 1 || $1 - last > 0.5 { print } { last = $1 }' > "$out/ticks.txt"
  grep -E 'sched: Allocate|backfill: Started|sched/backfill|preempt|Requeu|TIMEOUT|[Tt]ime limit|_slurm_rpc_submit_batch_job: |_job_complete: JobId=[0-9_()]+ done|[Rr]eservation|update_node' \
    "$ROOT/log/slurmctld.log" > "$out/slurmctld-events.log" || true
  sacct -M oracle -a -D -X -P -S "$(date -d @$((t0 - 600)) +%Y-%m-%dT%H:%M:%S)" -E now \
    --format=JobID,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,ElapsedRaw,TimelimitRaw,NNodes,ReqCPUS,AllocCPUS,ReqMem,State,Flags,Priority,NodeList,ReqTRES,AllocTRES,Reservation,ReservationId \
    > "$out/sacct.txt"
  echo "slurm $(slurmctld -V | awk '{print $2}')" >> "$out/meta.txt"
  admin_export "$out" "$t0"
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
