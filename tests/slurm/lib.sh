# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=bash
# A private single-node Slurm cluster for the tests (sourced after
# tests/integration/lib.sh and erg_setup, which give $work, pids[] and the
# exit trap). Everything lives under $work/slurm: MariaDB (own datadir,
# socket and port), slurmdbd, slurmctld and slurmd (node "erg1", 2 CPUs),
# with proctrack/cgroup, task/cgroup and jobacct_gather/cgroup, accounting
# through slurmdbd, account "ergacct" with user "nobody".
#   slurm_start            starts it all (EpilogSlurmctld=$SLURM_EPILOG_CTLD
#                          when set); SLURM_CONF is exported, SLURM_CG
#                          says which cgroup plugin runs (v1 or v2) and
#                          SLURM_SCOPE is the cgroup2 path (below the v2
#                          root) that holds every job: erg-agent --scope.
#   slurm_wait_job ID [S]  waits until job ID has ended in sacct (max S s)
#   slurm_stop             stops the daemons (also run on exit)
# Auth is auth/none: one private cluster on one host, no munge daemon.

slurm_need() {
  erg_need slurmctld slurmd slurmdbd sbatch sacct sacctmgr scontrol mariadbd mariadb-install-db
}

# cgroup v1 hierarchies (hybrid host) -> Slurm's cgroup/v1 plugin, the job
# cgroups are /sys/fs/cgroup/<ctrl>/slurm_<tag>/uid_U/job_N/...; a pure
# cgroup2 host -> cgroup/v2, jobs under system.slice/slurmstepd.scope.
slurm_cgroup_kind() {
  if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then echo v2; else echo v1; fi
}

slurm_mariadb_start() {
  local d=$work/slurm/db
  mkdir -p "$d"
  mariadb-install-db --no-defaults --datadir="$d/data" --user=root --auth-root-authentication-method=normal \
    --skip-test-db >"$d/install.log" 2>&1 || { cat "$d/install.log"; return 1; }
  mariadbd --no-defaults --datadir="$d/data" --socket="$d/sock" --port="$SLURM_DBPORT" \
    --bind-address=127.0.0.1 --user=root --skip-grant-tables --pid-file="$d/pid" \
    --innodb-buffer-pool-size=16M --innodb-log-file-size=8M --log-error="$d/err.log" &
  SLURM_DB_PID=$!
  wait_port "$SLURM_DBPORT" 30 || { cat "$d/err.log"; return 1; }
}

slurm_write_conf() {
  local s=$work/slurm cg=$1
  mkdir -p "$s/state" "$s/spool/erg1" "$s/log"
  # Jobs run as "nobody": its job script lives in the spool directory.
  chmod 711 "$work" "$s" "$s/spool" "$s/spool/erg1"
  cat >"$s/slurm.conf" <<CONF
ClusterName=erg$SLURM_TAG
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURM_CTLDPORT
SlurmdPort=$SLURM_DPORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd-%n.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
JobAcctGatherFrequency=2
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$SLURM_DBDPORT
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
InactiveLimit=0
KillWait=2
MinJobAge=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=erg1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=ergq Nodes=erg1 Default=YES MaxTime=INFINITE State=UP
CONF
  # One cgroup root per cluster, so parallel test clusters never meet.
  cat >"$s/cgroup.conf" <<CONF
CgroupPlugin=cgroup/$cg
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=yes
CONF
  [ "$cg" = v1 ] || printf 'IgnoreSystemd=yes\nCgroupAutomount=yes\n' >>"$s/cgroup.conf"
  cat >"$s/slurmdbd.conf" <<CONF
AuthType=auth/none
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$SLURM_DBDPORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$SLURM_DBPORT
StorageUser=root
StorageLoc=slurm_acct_db
LogFile=$s/log/slurmdbd.log
PidFile=$s/slurmdbd.pid
DebugLevel=info
CONF
  chmod 600 "$s/slurmdbd.conf"
}

# Waits until CMD (a string, eval'd) succeeds, max $2 seconds.
slurm_until() {
  local cmd=$1 deadline=$(( $(date +%s) + ${2:-30} ))
  until eval "$cmd" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

slurm_fail() {
  echo "slurm fixture: $1" >&2
  tail -n 20 "$work"/slurm/log/*.log >&2 2>/dev/null || true
  return 1
}

# Runs a command in cgroup2 group $1 (a path below the cgroup2 mount).
slurm_in_cg2() {
  local g=$1; shift
  sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG2$g" "$@"
}

slurm_start() {
  slurm_need
  erg_cgroup2
  SLURM_TAG=$$
  SLURM_CG=$(slurm_cgroup_kind)
  SLURM_CTLDPORT=$(free_port); SLURM_DPORT=$(free_port); SLURM_DBDPORT=$(free_port)
  SLURM_DBPORT=$(free_port)
  export SLURM_CONF=$work/slurm/slurm.conf
  slurm_write_conf "$SLURM_CG"
  [ -z "${SLURM_EPILOG_CTLD:-}" ] || echo "EpilogSlurmctld=$SLURM_EPILOG_CTLD" >>"$SLURM_CONF"
  # Job ids differ between runs: erg's job keys and Slurm's v1 cgroups
  # (one "slurm" tree per host) never see an id of an earlier run.
  echo "FirstJobId=$((100000 + (RANDOM * 32 + $$ % 32) % 900000))" >>"$SLURM_CONF"
  ERG_CLEANUP="slurm_stop; ${ERG_CLEANUP:-}"
  SLURM_UP=1 SLURMD_PID='' SLURM_CTLD_PID='' SLURM_DBD_PID='' SLURM_DB_PID=''
  slurm_mariadb_start || slurm_fail "mariadb did not start" || return 1
  slurmdbd -D >>"$work/slurm/log/slurmdbd.out" 2>&1 &
  SLURM_DBD_PID=$!
  wait_port "$SLURM_DBDPORT" 30 || slurm_fail "slurmdbd did not listen" || return 1
  sacctmgr -i add cluster "erg$SLURM_TAG" >/dev/null
  sacctmgr -i add account ergacct Description=erg Organization=erg >/dev/null
  sacctmgr -i add user nobody account=ergacct >/dev/null
  sacctmgr -i add user root account=ergacct >/dev/null
  slurmctld -D -i >>"$work/slurm/log/slurmctld.out" 2>&1 &
  SLURM_CTLD_PID=$!
  wait_port "$SLURM_CTLDPORT" 30 || slurm_fail "slurmctld did not listen" || return 1
  # v1: slurmd (and so every job step) in a cgroup2 group of its own, the
  # agent's scope; Slurm's v1 plugin leaves the cgroup2 tree alone. v2:
  # the plugin makes its own slurmstepd.scope (IgnoreSystemd: no systemd
  # here to ask) and puts every step below it.
  if [ "$SLURM_CG" = v1 ]; then
    SLURM_SCOPE=/erg-slurm-$SLURM_TAG
    mkdir -p "$CG2$SLURM_SCOPE"
    slurm_in_cg2 "$SLURM_SCOPE" slurmd -D -N erg1 >>"$work/slurm/log/slurmd.out" 2>&1 &
  else
    slurmd -D -N erg1 >>"$work/slurm/log/slurmd.out" 2>&1 &
  fi
  SLURMD_PID=$!
  slurm_until "sinfo -h -n erg1 -o %T | grep -Eq '^(idle|mixed|allocated)'" 40 ||
    slurm_fail "node erg1 never became idle: $(sinfo -h -o '%T %E' 2>&1)" || return 1
  if [ "$SLURM_CG" = v2 ]; then
    SLURM_SCOPE=$(find "$CG2" -maxdepth 3 -type d -name slurmstepd.scope | head -n1)
    SLURM_SCOPE=${SLURM_SCOPE#"$CG2"}
    [ -n "$SLURM_SCOPE" ] || slurm_fail "cgroup/v2: slurmd made no slurmstepd.scope" || return 1
  fi
}

# Stops the cluster: its jobs first (while slurmctld can still cancel
# them), then slurmd, whatever is left in the v1 scope, the other daemons.
slurm_stop() {
  local p
  [ "${SLURM_UP:-0}" = 1 ] || return 0
  SLURM_UP=0
  # shellcheck disable=SC2046
  [ -z "${SLURM_CTLD_PID:-}" ] || scancel --quiet $(squeue -h -o %A 2>/dev/null) 2>/dev/null || true
  if [ -n "${SLURMD_PID:-}" ]; then
    kill "$SLURMD_PID" 2>/dev/null || true
    wait "$SLURMD_PID" 2>/dev/null || true
  fi
  if [ "$SLURM_CG" = v1 ] && [ -n "${SLURM_SCOPE:-}" ] && [ -d "$CG2$SLURM_SCOPE" ]; then
    for p in $(cat "$CG2$SLURM_SCOPE/cgroup.procs"); do kill -9 "$p" 2>/dev/null || true; done
    sleep 0.2
    rmdir "$CG2$SLURM_SCOPE" 2>/dev/null || true
    # Slurm's empty v1 job tree (rmdir leaves anything still in use).
    find /sys/fs/cgroup/*/slurm_erg1 -depth -type d -exec rmdir {} + 2>/dev/null || true
  fi
  for p in ${SLURM_CTLD_PID:-} ${SLURM_DBD_PID:-} ${SLURM_DB_PID:-}; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
}

# sacct's State of job $1 (the allocation line).
slurm_job_state() {
  sacct -X -n -P -j "$1" -o State 2>/dev/null | head -n1
}

slurm_wait_job() {
  local id=$1 max=${2:-60}
  slurm_until "slurm_job_state $id | grep -Eq '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY)'" "$max"
}
