#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What the per-job and node-dynamic 95 % intervals (docs/model.md,
# "Uncertainty") cost ergd (docs/benchmarks.md, "Per-job uncertainty"): in
# one invocation, collector_bench.sh with meters (every cell attributed)
# and WARM=1 (the second ergd run is steady state), with
# `energy_intervals = false` and `= true` taking turns, ROUNDS times; prints
# each run's steady-state load-phase CPU and the ratio on/off of their sums.
# Not a test. usage: unc_cost.sh [--port-base PORT] BUILD_DIR [N=50] [P=100] [D=40] [ROUNDS=2]
set -euo pipefail
here=$(dirname "$0")
pb=()
[ "${1:-}" = --port-base ] && { pb=(--port-base "$2"); shift 2; }
B=$1; N=${2:-50}; P=${3:-100}; D=${4:-40}; ROUNDS=${5:-2}
declare -A sum=([false]=0 [true]=0)
for r in $(seq "$ROUNDS"); do
  for on in false true; do
    out=$(METERS=1 WARM=1 SINK=0 IDLE_S=5 ERGD_CONF="energy_intervals = $on" \
      "$here/collector_bench.sh" "${pb[@]}" "$B" "$N" "$P" "$D")
    # The second ergd run's load phase: "ergd: load phase Ws (...), cpu Cs".
    cpu=$(awk '/^ergd: load phase/ { for (i = 1; i <= NF; i++) if ($i == "cpu") c = $(i + 1) } END { sub(/s,?$/, "", c); print c }' <<<"$out")
    [ -n "$cpu" ] || { echo "$out" >&2; echo "unc_cost: no load-phase CPU in collector_bench's output" >&2; exit 1; }
    echo "round $r energy_intervals=$on: steady-state ergd cpu ${cpu}s ($(cut -d' ' -f1-3 /proc/loadavg))"
    sum[$on]=$(awk -v a="${sum[$on]}" -v b="$cpu" 'BEGIN { print a + b }')
  done
done
awk -v off="${sum[false]}" -v on="${sum[true]}" -v n="$N" -v p="$P" -v d="$D" 'BEGIN {
  printf "%d nodes x %d processes, %d s, meters: ergd cpu off %.2fs, on %.2fs: ratio %.3f\n", n, p, d, off, on, on / off }'
