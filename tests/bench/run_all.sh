#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every benchmark of tests/bench in one invocation (not a ctest test), one
# after the other so none shares the cores with another, each with the
# machine's load average printed before and after it:
#   fit        fit_bench ROWS 5 (erg_fit vs GSL OLS, journal parsing)
#   snmp       snmp_bench.sh, fast agents, 500 x 24, interleaved passes
#   rrd        rrd_bench.sh, direct file writes and through rrdcached
#   agent      agent_bench.sh, idle 100/1,000/5,000 processes + churn
#   collector  collector_sweep.sh, 100/1,000/5,000 nodes x 100 processes
# usage: run_all.sh --port-base PORT BUILD_DIR [OUT_DIR]
# Ports: PORT .. PORT+59 (or ERG_BENCH_PORT_BASE; tests/bench/bench_lib.sh):
#   +0..+2 snmp, +10..+11 agent, +20..+51 collector sweep (8 per size).
#   Choose PORT below the ephemeral range (net.ipv4.ip_local_port_range):
#   5,000 agent connections take ephemeral ports.
# env: ONLY="fit snmp ..." runs a subset; SKIP_QUIET_CHECK=1 runs on a busy
#      machine (default: refuse to start above load 1.5, since the figures
#      are meant to be recorded); AGENT_S (60), COLLECTOR_S (30), FIT_ROWS
#      (120000), RRD_NODES (500), NODES ("100 1000 5000"), PROCS_PER_NODE
#      (100), ARCHIVE_DAYS (default "0.1 0 0 0": 5,000 fresh node.rrd files
#      at the default retention would be 32 GB).
# Writes OUT_DIR/<bench>.log for each and OUT_DIR/summary.txt (default
# OUT_DIR: /tmp/erg-bench-all.<date>).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/bench_lib.sh"
bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"
[ $# -ge 1 ] || { sed -n '3,26p' "$0" >&2; exit 2; }
B=$(realpath "$1")
OUT=${2:-/tmp/erg-bench-all.$(date +%Y%m%d-%H%M%S)}
ONLY=${ONLY:-fit snmp rrd agent collector}
BASE=$ERG_BENCH_PORT_BASE
mkdir -p "$OUT"

load1() { cut -d' ' -f1 /proc/loadavg; }
if [ "${SKIP_QUIET_CHECK:-0}" != 1 ] && awk -v l="$(load1)" 'BEGIN { exit !(l > 1.5) }'; then
  echo "run_all.sh: load average $(load1) > 1.5: not a quiet machine (SKIP_QUIET_CHECK=1 to run anyway)" >&2
  exit 1
fi
need() { [ -x "$1" ] || { echo "run_all.sh: missing $1: cmake --build $B -j2" >&2; exit 1; }; }
for f in tests/fit/fit_bench tests/pdu/snmp_bench tests/pdu/snmp_bench_agent tests/bench/rrd_bench \
         node-agent/erg-agent tests/integration/burner tests/agent/agent_pull_probe \
         tests/bench/collector_load tests/bench/collector_sink collector/ergd; do
  need "$B/$f"
done

{
  echo "# erg benchmarks, one invocation: $(date -u '+%F %T UTC'), $(uname -r), $(nproc) CPUs,"
  echo "# $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(free -g | awk '/Mem:/ { print $2 }') GiB,"
  echo "# git $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?'), port base $BASE, build $B"
} | tee "$OUT/summary.txt"

# Up to 120 s for the previous section's load to decay (the agent bench's
# churn leaves the 1-minute average at ~2), so each starts near idle.
settle() {
  local i
  for i in $(seq 1 24); do
    awk -v l="$(load1)" 'BEGIN { exit !(l < 1.0) }' && return 0
    sleep 5
  done
}

# One section: its log, wall time and the load around it into the summary.
section() { # NAME CMD...
  local name=$1; shift
  case " $ONLY " in *" $name "*) ;; *) return 0 ;; esac
  local l0 t0 rc=0
  settle
  l0=$(cut -d' ' -f1-3 /proc/loadavg); t0=$(date +%s)
  echo "===== $name: $*" | tee -a "$OUT/summary.txt"
  "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  echo "----- $name: rc=$rc, $(($(date +%s) - t0)) s, load before $l0, after $(cut -d' ' -f1-3 /proc/loadavg)" \
    | tee -a "$OUT/summary.txt"
  # Short logs go into the summary whole; the sweep's and agent's tables
  # are their closing lines.
  case $name in
    collector) sed -n '/^| nodes /,$p' "$OUT/$name.log" ;;
    agent) grep -E '^(#|idle|churn)' "$OUT/$name.log" ;;
    *) cat "$OUT/$name.log" ;;
  esac >>"$OUT/summary.txt"
  return 0
}

section fit "$B/tests/fit/fit_bench" "${FIT_ROWS:-120000}" 5
section snmp env SNMP_AGENT=fast PASSES=3 INFLIGHT_SWEEP="32 128" \
  "$HERE/snmp_bench.sh" --port-base "$BASE" "$B" 500 24 5 2
section rrd "$HERE/rrd_bench.sh" "$B" "${RRD_NODES:-500}" 20
section agent env DURATION="${AGENT_S:-60}" PROCS="100 1000 5000" \
  "$HERE/agent_bench.sh" --port-base $((BASE + 10)) "$B/node-agent/erg-agent" \
  "$B/tests/integration/burner" "$B/tests/agent/agent_pull_probe"
section collector env ARCHIVE_DAYS="${ARCHIVE_DAYS:-0.1 0 0 0}" \
  "$HERE/collector_sweep.sh" --port-base $((BASE + 20)) "$B" "${PROCS_PER_NODE:-100}" \
  "${COLLECTOR_S:-30}" "${NODES:-100 1000 5000}"
echo "all logs: $OUT" | tee -a "$OUT/summary.txt"
