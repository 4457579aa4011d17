#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Agent overhead (not a ctest test): CPU seconds per hour and peak RSS of
# erg-agent (eBPF and /proc paths, 1 Hz, sending to a ZeroMQ sink) side by
# side with prometheus-process-exporter (scraped at 1 Hz, every process
# tracked by comm) and `pidstat -u -r -d -h 1`, all four running at once,
# in these scenarios, one after the other in one invocation:
#   idle-N: N idle processes (sleep 3600) added to the machine's own, for
#           each N in PROCS (default "100 1000 5000")
#   churn:  the 500 short-lived processes of tests/integration/burner.c,
#           repeating (the idle ones gone)
# Each tool's CPU is utime+stime from /proc/PID/stat over DURATION seconds,
# extrapolated to an hour; peak RSS is VmHWM. "us/proc" is that CPU per
# process started on the machine meanwhile (/proc/stat "processes"): under
# churn a per-event cost that, unlike the s/h, does not depend on how fast
# the loaded machine runs the burners. In-kernel eBPF program time is
# not charged to the agent by the kernel, so it is measured separately
# (kernel.bpf_stats_enabled, the eBPF agent's own programs) and added to
# the eBPF row.
#
#   tests/bench/agent_bench.sh --port-base PORT build-agent/node-agent/erg-agent \
#       build-agent/tests/integration/burner build-agent/tests/agent/agent_pull_probe
# Ports: PORT .. PORT+1 (or ERG_BENCH_PORT_BASE; tests/bench/bench_lib.sh):
#   +0 the ZeroMQ sink both agents send to, +1 process-exporter's /metrics.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"
AGENT=$(realpath "$1") BURNER=$(realpath "$2") PROBE=$(realpath "$3")
DURATION=${DURATION:-60}
PROCS=${PROCS:-"100 1000 5000"}
. "$(dirname "$0")/../integration/lib.sh"
for c in prometheus-process-exporter pidstat curl bpftool; do
  command -v $c >/dev/null || { echo "missing $c (apt-get install prometheus-process-exporter sysstat curl bpftool)"; exit 1; }
done
HZ=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/erg-agent-bench.XXXXXX)
pids=() bg=()
cleanup() {
  for p in "${pids[@]}" "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/sleepers" ] && xargs -r kill <"$work/sleepers" 2>/dev/null || true
  sysctl -q kernel.bpf_stats_enabled=0 || true
  rm -rf "$work"
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
hwm_kb() { awk '/^VmHWM/ {print $2}' /proc/$1/status; }
# Run time of the eBPF agent's own programs (ids from its fdinfo), one
# "id ns" line each: every erg program on the machine would count other
# agents' and the BPF tests' too, and one unloaded between two readings
# made the difference negative (seen on a shared machine).
bpf_ns() { # FILE
  local ids
  ids=$(cat /proc/"$AG_BPF"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -un | tr '\n' ' ')
  bpftool prog show -j 2>/dev/null | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1].split()}
for p in json.load(sys.stdin):
    if p["id"] in ids:
        print(p["id"], p.get("run_time_ns", 0))' "$ids" >"$1"
}
bpf_delta() { # FILE0 FILE1: ns run by the programs in both
  python3 -c '
import sys
a = dict(l.split() for l in open(sys.argv[1]))
b = dict(l.split() for l in open(sys.argv[2]))
print(sum(int(b[i]) - int(a[i]) for i in a if i in b))' "$1" "$2"
}

start_tools() {
  local port exp_port
  port=$(bench_port 0)
  "$PROBE" "tcp://127.0.0.1:$port" 100000 >/dev/null &
  bg+=($!)
  sleep 0.3
  kill -0 $! 2>/dev/null || { echo "the sink could not listen on port $port: pick another --port-base"; exit 1; }
  "$AGENT" --collection bpf --interval 1 --collector "tcp://127.0.0.1:$port" --node bench-bpf \
    2>"$work/agent-bpf.log" &
  pids+=($!); AG_BPF=$!
  "$AGENT" --collection proc --interval 1 --collector "tcp://127.0.0.1:$port" --node bench-proc \
    2>"$work/agent-proc.log" &
  pids+=($!); AG_PROC=$!
  exp_port=$(bench_port 1)
  printf 'process_names:\n  - name: "{{.Comm}}"\n    cmdline:\n    - ".+"\n' >"$work/pe.yml"
  prometheus-process-exporter -config.path "$work/pe.yml" \
    -web.listen-address "127.0.0.1:$exp_port" 2>"$work/pe.log" &
  pids+=($!); PE=$!
  wait_port "$exp_port" 10
  (while :; do curl -s "http://127.0.0.1:$exp_port/metrics" >/dev/null; sleep 1; done) &
  bg+=($!)
  pidstat -u -r -d -h 1 >/dev/null &
  pids+=($!); PIDSTAT=$!
}

measure() { # scenario
  local name=$1 p
  sleep 5 # warm-up: first sweeps, exporter's first scrapes
  declare -A t0 t1
  for p in $AG_BPF $AG_PROC $PE $PIDSTAT; do t0[$p]=$(cpu_ticks $p); done
  local bd; bpf_ns "$work/bpf0"
  local f0 f1; f0=$(awk '/^processes/ {print $2}' /proc/stat)
  sleep "$DURATION"
  for p in $AG_BPF $AG_PROC $PE $PIDSTAT; do t1[$p]=$(cpu_ticks $p); done
  f1=$(awk '/^processes/ {print $2}' /proc/stat)
  bpf_ns "$work/bpf1"
  bd=$(bpf_delta "$work/bpf0" "$work/bpf1")
  per_h() { python3 -c "print($1 * 3600 / $DURATION)"; }
  local pe_h; pe_h=$(per_h "(${t1[$PE]} - ${t0[$PE]}) / $HZ")
  echo "# $name: $((f1 - f0)) processes started in $DURATION s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-10s %-30s %9s %9s %9s %8s %8s\n' "$name" tool "CPU s/h" "peak RSS" "RSS now" "vs p-e" "us/proc"
  for row in "$AG_BPF erg-agent-eBPF(user+sys)" "$AG_BPF erg-agent-eBPF(+in-kernel)" \
             "$AG_PROC erg-agent-/proc" "$PE prometheus-process-exporter" "$PIDSTAT pidstat"; do
    set -- $row
    local h; h=$(per_h "(${t1[$1]} - ${t0[$1]}) / $HZ")
    # The kernel charges BPF program time to whichever task hit the
    # tracepoint, not to the agent: it is added here from bpf_stats.
    [ "$2" = "erg-agent-eBPF(+in-kernel)" ] && h=$(python3 -c "print($h + $bd / 1e9 * 3600 / $DURATION)")
    printf '%-10s %-30s %9.1f %7.1fMB %7.1fMB %8.3f %8.1f\n' "$name" "$2" "$h" \
      "$(python3 -c "print($(hwm_kb $1) / 1000)")" \
      "$(python3 -c "print($(awk '/^VmRSS/ {print $2}' /proc/$1/status) / 1000)")" \
      "$(python3 -c "print($h / $pe_h)")" \
      "$(python3 -c "print($h * $DURATION / 3600 * 1e6 / max(1, $f1 - $f0))")"
  done
}

sysctl -q kernel.bpf_stats_enabled=1
echo "# $(nproc) CPUs, $(uname -r), DURATION=$DURATION s, load $(cut -d' ' -f1-3 /proc/loadavg)"
start_tools
# (a) N idle processes on top of the machine's own, N growing.
have=0
for n in $PROCS; do
  for _ in $(seq $((have + 1)) "$n"); do sleep 3600 & echo $! >>"$work/sleepers"; done
  have=$n
  echo "# idle-$n: processes on the machine: $(ls /proc | grep -c '^[0-9]')"
  measure idle-$n
done
xargs -r kill <"$work/sleepers" 2>/dev/null || true
rm -f "$work/sleepers"
# (b) 500 short-lived processes (20 ms of CPU each, 2 at a time), repeating.
(while :; do "$BURNER" 500 20 ergburn 2 >/dev/null; done) &
bg+=($!)
measure churn
