# SPDX-License-Identifier: GPL-3.0-or-later
# Helpers shared by the integration tests (sourced).

# erg_free_port t|u: a TCP (t) or UDP (u) port on 127.0.0.1 that nothing
# is bound to now. Below the ephemeral range (32768+): a connect to a port
# nobody listens on can otherwise end up connected to itself and take it,
# and another test's connection (an snmpget) can take a kernel-picked port as
# its source port before our daemon binds it.
erg_free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((10000 + RANDOM % 22000))
    if ! ss -H"$1"ln "sport = :$p" | grep -q .; then
      echo "$p"
      return 0
    fi
  done
  return 1
}
free_port() { erg_free_port t; }
free_udp_port() { erg_free_port u; }

# Waits until a TCP port listens (max $2 seconds).
wait_port() {
  local port=$1 max=${2:-10}
  for _ in $(seq 1 $((max * 10))); do
    ss -Htln "sport = :$port" | grep -q . && return 0
    sleep 0.1
  done
  echo "port $port never opened" >&2
  return 1
}

# Original key -> archive path, through the store's index.tsv.
key_rrd() {
  local dir=$1 key=$2
  awk -F'\t' -v k="$key" '$2 == k { print $1 }' "$dir/index.tsv" | head -n1 |
    sed "s|^|$dir/|; s|\$|.rrd|"
}

# Skips the test (exit 77) unless every command named is installed.
erg_need() {
  local tool
  for tool; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
  done
}

# The cgroup2 mount as CG2 (skips the test without one) and SIMPREFIX, its
# path below /sys/fs/cgroup as erg-pdusim --node takes it ("" or /unified).
erg_cgroup2() {
  CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
  [ -n "$CG2" ] || { echo "SKIP: no cgroup2 mount"; exit 77; }
  SIMPREFIX=${CG2#/sys/fs/cgroup}
}

# Runs a command inside cgroup2 group $1 (relative to $CG2).
erg_in_cg() { local g=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG2/$g" "$@"; }

# Kills the processes of the cgroup2 groups given (relative to $CG2) and
# removes the groups, in the order given (children before parents).
erg_cg_remove() {
  local g p
  for g in "$@"; do
    [ -d "$CG2/$g" ] || continue
    for p in $(cat "$CG2/$g/cgroup.procs"); do kill "$p" 2>/dev/null || true; done
  done
  sleep 0.3
  for g in "$@"; do rmdir "$CG2/$g" 2>/dev/null || true; done
}

# After erg_setup: makes the cgroup2 groups given (relative to $CG2,
# parents before children), removed at exit in the reverse order (or
# before, erg_cg_cleanup), or skips the test (77) when one cannot be made.
erg_cg_cleanup() {
  # shellcheck disable=SC2086 # one group a word
  erg_cg_remove ${erg_cg_made:-}
}
erg_cg_make() {
  local g
  erg_cg_made=$(printf '%s\n' "$@" | tac | tr '\n' ' ')
  ERG_CLEANUP=erg_cg_cleanup
  for g in "$@"; do
    mkdir "$CG2/$g" 2>/dev/null || { echo "SKIP: cannot create cgroup $CG2/$g"; exit 77; }
  done
}

# ---- daemons for the integration tests ----
# Scripts set PDUSIM, ERGD, AGENT as needed, then:
#   erg_setup NAME                  work dir $work, pids[], cleanup on exit
#   erg_ports                       free ports MB (meter), ZP (agents), HP (http)
#   erg_ergd_conf <<CONF ... CONF   $work/ergd.conf: [collector] listen, http,
#                                   data_dir, then the lines given on stdin
#   erg_sim_meter [UNIT]            prints a [meter.sim] section for erg-pdusim
#                                   (unit_id UNIT, default 1)
#   erg_start_pdusim ARGS...        erg-pdusim --modbus on MB ($work/pdusim.log)
#   erg_start_ergd [LOG]            ergd -c $work/ergd.conf; ERGD_PID
#   erg_start_agent NODE ARGS...    erg-agent for NODE to ZP ($work/agent-NODE.log)
#   erg_instance NAME               one of several ergd in a test: directory
#                                   erg_dir=$work/NAME, new ports ZP and HP
#   erg_stop                        kills the pids[] daemons, waits, empties pids
#   erg_wait_log FILE PATTERN [N [S]]  waits (max S s, default 10) until N
#                                   (default 1) lines of FILE match PATTERN
#   erg_acc_opts STEP WINDOW [POLL] prints the accuracy harness's [collector]
#                                   options (model_dir $erg_dir/models, idle
#                                   separate, lag up to 10 s over WINDOW s,
#                                   meters polled every POLL s, default 0.5, ...)
#   erg_load_schedule CGDIR SCHED   CPU load "LOAD:SECONDS,..." (LOAD a fraction
#                                   of one CPU; stress-ng, a sleep for 0) run in
#                                   the cgroup directory CGDIR
# erg_dir, when set (erg_instance; or erg_dir=DIR before one call, for that
# call only), stands for $work above in erg_ergd_conf, erg_start_ergd and
# erg_start_agent: the config, data_dir and logs go there.
# KEEP=1 keeps the work directory; ERG_CLEANUP (a command) runs on exit too.

# Where each thread of process $1 waits: gdb's backtraces where gdb is
# installed, else the kernel's view (wchan, stack).
erg_stacks() {
  local t
  if command -v gdb >/dev/null; then
    timeout 20 gdb -p "$1" -batch -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(Thread|#)'
    return
  fi
  for t in /proc/"$1"/task/*; do
    echo "thread ${t##*/} $(cat "$t/comm" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
    sed 's/^/    /' "$t/stack" 2>/dev/null
  done
}

# Our child $1 still runs (a zombie, exited and not yet waited for, does
# not; nor does a process that reused the pid of one reaped before: its
# parent is not this shell). Builtins only: erg_cleanup calls it.
erg_alive() {
  local stat rest ppid
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  rest=${stat##*) } # "STATE PPID ..."
  ppid=${rest#* }
  [ "${ppid%% *}" = "$$" ] && [ "${rest%% *}" != Z ]
}

# A daemon still running 60 s after its SIGTERM does not stop: said, with
# where its threads wait, killed, and the test fails (rather than ctest's
# timeout later, which says nothing).
erg_cleanup() {
  local rc=$? p i cmd
  # Once: a subshell of the cleanup (a command substitution) must not run
  # it again.
  trap - EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -z "${ERG_CLEANUP:-}" ] || eval "$ERG_CLEANUP"
  for p in "${pids[@]}"; do
    for ((i = 0; i < 600; i++)); do erg_alive "$p" || break; sleep 0.1; done
    erg_alive "$p" || continue
    cmd=
    read -r -d '' cmd 2>/dev/null <"/proc/$p/cmdline" || true
    echo "FAIL: pid $p ($cmd) still runs 60 s after SIGTERM" >&2
    erg_stacks "$p" >&2
    kill -9 "$p" 2>/dev/null || true
    [ "$rc" != 0 ] || rc=1
  done
  wait 2>/dev/null || true
  [ "$rc" = 0 ] || erg_log_tails "$work"
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
  exit "$rc"
}

# erg_log_tails DIR: the last 20 lines of each non-empty *.log in DIR, on
# stderr (a failed test's daemons say there why; ctest shows only the
# test's own output).
erg_log_tails() {
  local f
  for f in "$1"/*.log; do
    [ -s "$f" ] || continue
    echo "--- ${f##*/} (last 20 lines)" >&2
    tail -n 20 "$f" >&2
  done
}

erg_setup() {
  work=$(mktemp -d "/tmp/erg-$1.XXXXXX")
  pids=()
  trap erg_cleanup EXIT
}

erg_ports() {
  MB=$(free_port); ZP=$(free_port); HP=$(free_port)
}

erg_ergd_conf() {
  local d=${erg_dir:-$work}
  { printf '[collector]\nlisten = tcp://127.0.0.1:%s\nhttp = 127.0.0.1:%s\ndata_dir = %s/data\n' \
      "$ZP" "$HP" "$d"
    cat; } >"$d/ergd.conf"
}

# [collector] settings of the short checks that read ergd's journal and
# /metrics, never its pages or long archives: 1-s cells final after one
# more, no lag compensation, tiny archives, no page render, no WAL.
erg_quick_opts() {
  printf 'step_seconds = 1\nsettle_steps = 1\nlag_max_seconds = 0\n'
  printf 'archive_days = 0.01 0 0 0\npage_interval_seconds = 3600\nwal = no\n'
}

erg_sim_meter() {
  printf '[meter.sim]\ndriver = modbus\nhost = 127.0.0.1\nport = %s\nprofile = erg-sim\nunit_id = %s\n' \
    "$MB" "${1:-1}"
}

erg_instance() {
  erg_dir=$work/$1
  mkdir -p "$erg_dir"
  ZP=$(free_port); HP=$(free_port)
}

erg_stop() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ ${#pids[@]} = 0 ] || wait "${pids[@]}" 2>/dev/null || true
  pids=()
}

# erg_wait_agent_messages N: until ergd (/metrics on $HP) has taken N agent
# messages (at most 10 s; the test goes on either way, its checks say).
erg_wait_agent_messages() {
  local i got
  for i in $(seq 1 100); do
    got=$(curl -sf "http://127.0.0.1:$HP/metrics" |
      awk '/^erg_agent_messages_total\{result="ok"\}/ { print $2 }') || true
    [ "${got:-0}" -ge "$1" ] 2>/dev/null && return 0
    sleep 0.1
  done
  return 0
}

erg_wait_log() {
  local file=$1 pat=$2 n=${3:-1} max=${4:-10} got i
  for i in $(seq 0 $((max * 2))); do
    got=$(grep -c -- "$pat" "$file" 2>/dev/null) || true
    [ "${got:-0}" -ge "$n" ] && return 0
    [ "$i" = $((max * 2)) ] || sleep 0.5
  done
  return 1
}

erg_start_pdusim() {
  "$PDUSIM" --modbus "127.0.0.1:$MB" "$@" >"$work/pdusim.log" 2>&1 &
  pids+=($!)
  wait_port "$MB"
}

erg_start_ergd() {
  local d=${erg_dir:-$work}
  "$ERGD" -c "$d/ergd.conf" >"${1:-$d/ergd.log}" 2>&1 &
  ERGD_PID=$!
  pids+=($ERGD_PID)
  wait_port "$HP"
}

erg_start_agent() {
  local node=$1
  shift
  "$AGENT" --node "$node" --collector "tcp://127.0.0.1:$ZP" "$@" \
    >>"${erg_dir:-$work}/agent-$node.log" 2>&1 &
  pids+=($!)
}

# ---- the accuracy harness (tests/accuracy/run.sh, shared.sh) ----
erg_acc_opts() {
  printf 'model_dir = %s/models\nidle_policy = separate\nstep_seconds = %s\nsettle_steps = 1\n' \
    "${erg_dir:-$work}" "$1"
  printf 'poll_seconds = %s\nlag_max_seconds = 10\nlag_window_seconds = %s\ntop_processes = 20\n' \
    "${3:-0.5}" "$2"
}

erg_load_schedule() {
  sh -c 'echo $$ > "$0/cgroup.procs" || exit 1
    IFS=,
    for step in $1; do
      pct=$(awk -v l="${step%%:*}" "BEGIN { printf \"%d\", l * 100 + 0.5 }")
      s=${step#*:}
      if [ "$pct" -gt 0 ]; then stress-ng --cpu 1 --cpu-load "$pct" --timeout "${s}s" -q
      else sleep "$s"; fi
    done' "$1" "$2"
}

# Prometheus with $work/prometheus.yml on port $PP, its TSDB under $work;
# returns once it is ready: it listens before its TSDB is open, and queries
# answer 503 until /-/ready does (seconds on a loaded machine).
erg_start_prometheus() {
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address=127.0.0.1:$PP >"$work/prom.log" 2>&1 &
  pids+=($!)
  wait_port "$PP" 20
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$PP/-/ready" >/dev/null && return 0
    sleep 0.25
  done
  echo "FAIL: Prometheus never ready"; tail "$work/prom.log"; return 1
}
