#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# In-kernel cost of erg-agent's eBPF programs, per program (not a ctest
# test; needs root and bpftool): one erg-agent on the eBPF path (1 Hz,
# samples dumped to /dev/null) under the churn load of agent_bench.sh
# (burner's 500 processes x 20 ms of CPU, 2 at a time, repeating), and for
# each of its programs, over DURATION seconds: runs per second, ns per run
# (run_time_ns / run_cnt from the kernel's BPF run-time statistics) and CPU
# per second. The programs are this agent's only (their ids from its
# /proc/PID/fdinfo), so other agents or BPF tests on the machine do not
# count. Statistics are switched on with BPF_ENABLE_STATS (an fd held for
# the run: someone else's `sysctl kernel.bpf_stats_enabled=0` meanwhile
# does not stop them), else with the sysctl.
#
#   tests/bench/bpf_prog_cost.sh build/node-agent/erg-agent build/tests/integration/burner
#
# env: DURATION (20 s), LOAD=churn|idle (idle: no burner, the machine's own
#      activity only), AGENT_ARGS (extra erg-agent options), COMPARE=AGENT2:
#      a second erg-agent (another build) running at the same time on the
#      same events, with a table of its own: on a busy or shared machine
#      ns/run moves 2-3 x from one minute to the next, so compare builds
#      side by side, not one run after the other (each program also warms
#      the caches for the other: both read the same task structs).
# Note: the statistics themselves add two clock reads per run (~20-40 ns on
# a VM) to every figure; compare figures taken the same way.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '3,21p' "$0" >&2; exit 2; }
AGENT=$(realpath "$1") BURNER=$(realpath "$2")
DURATION=${DURATION:-20}
LOAD=${LOAD:-churn}
[ "$(id -u)" = 0 ] || { echo "bpf_prog_cost: needs root" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "bpf_prog_cost: missing bpftool (apt-get install bpftool)" >&2; exit 1; }
work=$(mktemp -d /tmp/erg-prog-cost.XXXXXX)
pids=()
sysctl_set=
churn=
cleanup() {
  [ -n "$churn" ] && kill -- "-$churn" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "$sysctl_set" ] && sysctl -q kernel.bpf_stats_enabled=0 || true
  rm -rf "$work"
}
trap cleanup EXIT

# Holds a BPF_ENABLE_STATS fd (kernel 5.8+) until killed.
python3 - "$work/stats.ok" <<'PY' &
import ctypes, os, platform, signal, struct, sys
nr = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "ppc64le": 361, "s390x": 351}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("I", 0), 8)  # BPF_STATS_RUN_TIME
fd = libc.syscall(nr, 32, attr, 8) if nr else -1              # BPF_ENABLE_STATS
if fd < 0:
    sys.exit(1)
open(sys.argv[1], "w").close()
signal.pause()
PY
pids+=($!)
for _ in $(seq 50); do [ -e "$work/stats.ok" ] || ! kill -0 "${pids[0]}" 2>/dev/null && break; sleep 0.1; done
if [ ! -e "$work/stats.ok" ]; then
  sysctl -q kernel.bpf_stats_enabled=1
  sysctl_set=1
fi

agent_ids() { cat /proc/$1/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -un | tr '\n' ' '; }
has_switch() { # IDS: the switch program is among them
  bpftool prog show -j | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1].split()}
sys.exit(not any(p["id"] in ids and p.get("name") == "erg_sched_switch" for p in json.load(sys.stdin)))' "$1"
}
# Starts agent number $1 (binary $2); its program ids in ids[$1] once
# loaded and attached: the switch program is among them and the set has not
# changed for half a second.
declare -A ids
start_agent() {
  local n=$1 bin=$2 a prev= cur= _
  # shellcheck disable=SC2086
  "$bin" --dump --interval 1 --collection bpf --node prog-cost ${AGENT_ARGS:-} >/dev/null 2>"$work/agent$n.log" &
  a=$!
  pids+=($a)
  for _ in $(seq 300); do
    sleep 0.5
    kill -0 $a 2>/dev/null || { cat "$work/agent$n.log" >&2; exit 1; }
    cur=$(agent_ids $a)
    if [ -n "$cur" ] && [ "$cur" = "$prev" ] && has_switch "$cur"; then
      ids[$n]=$cur
      return 0
    fi
    prev=$cur
  done
  echo "bpf_prog_cost: agent $bin did not load its BPF programs" >&2
  cat "$work/agent$n.log" >&2
  exit 1
}
AGENTS=("$AGENT")
[ -n "${COMPARE:-}" ] && AGENTS+=("$(realpath "$COMPARE")")
for i in "${!AGENTS[@]}"; do start_agent "$i" "${AGENTS[$i]}"; done

snap() { # FILE: id name run_cnt run_time_ns recursion_misses, all agents' programs
  bpftool prog show -j | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    print(p["id"], p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0), p.get("recursion_misses", 0))' >"$1"
}

churn=
if [ "$LOAD" = churn ]; then
  # A process group of its own, so the cleanup stops the burner running now
  # and its children with the loop.
  setsid bash -c 'while :; do "$0" 500 20 ergburn 2 >/dev/null; done' "$BURNER" &
  churn=$!
fi
sleep 3 # past the agents' start and the burner's first forks
ctxt0=$(awk '/^ctxt/ {print $2}' /proc/stat) forks0=$(awk '/^processes/ {print $2}' /proc/stat)
snap "$work/a"
t0=$(date +%s.%N)
sleep "$DURATION"
snap "$work/b"
t1=$(date +%s.%N)
ctxt1=$(awk '/^ctxt/ {print $2}' /proc/stat) forks1=$(awk '/^processes/ {print $2}' /proc/stat)

echo "# $(date -u '+%F %T UTC'), $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)),"
echo "# load $LOAD, load average $(cut -d' ' -f1-3 /proc/loadavg), git $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')"
python3 - "$work/a" "$work/b" "$t0" "$t1" "$ctxt0" "$ctxt1" "$forks0" "$forks1" <<'PY'
import sys
def rd(f):
    return {l.split()[0]: l.split() for l in open(f)}
a, b = rd(sys.argv[1]), rd(sys.argv[2])
dt = float(sys.argv[4]) - float(sys.argv[3])
ctxt = (int(sys.argv[6]) - int(sys.argv[5])) / dt
forks = (int(sys.argv[8]) - int(sys.argv[7])) / dt
print(f"# {dt:.1f} s: {ctxt:,.0f} context switches/s, {forks:,.1f} forks/s on the machine")
PY
for i in "${!AGENTS[@]}"; do
  echo "# agent ${AGENTS[$i]}"
  python3 - "$work/a" "$work/b" "$t0" "$t1" "${ids[$i]}" <<'PY'
import sys
def rd(f):
    return {l.split()[0]: l.split() for l in open(f)}
a, b = rd(sys.argv[1]), rd(sys.argv[2])
dt = float(sys.argv[4]) - float(sys.argv[3])
mine = set(sys.argv[5].split())
print(f"| {'program':<24} | {'runs/s':>9} | {'ns/run':>7} | {'CPU us/s':>8} | {'missed/s':>8} |")
print(f"| {'-'*24} | {'-'*8}: | {'-'*6}: | {'-'*7}: | {'-'*7}: |")
rows, tot_ns = [], 0
for i in mine & set(b):
    _, name, c1, t1, m1 = b[i]
    c0, t0, m0 = (int(a[i][2]), int(a[i][3]), int(a[i][4])) if i in a else (0, 0, 0)
    rows.append((int(t1) - t0, name, int(c1) - c0, int(m1) - m0))
for ns, name, n, miss in sorted(rows, reverse=True):
    tot_ns += ns
    per = f"{ns / n:7.0f}" if n else "      -"
    print(f"| {name:<24} | {n / dt:9.1f} | {per} | {ns / dt / 1e3:8.1f} | {miss / dt:8.1f} |")
print(f"| {'all':<24} | {'':>9} | {'':>7} | {tot_ns / dt / 1e3:8.1f} | {'':>8} |")
print(f"# in-kernel total: {tot_ns / dt / 1e9 * 3600:.2f} CPU s/h ({tot_ns / dt / 1e7:.3f} % of one CPU)")
PY
done
