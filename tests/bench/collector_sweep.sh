#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Collector ingest at several sizes (not a ctest test): collector_bench.sh
# once per node count (default 100, 1,000 and 5,000 nodes x 100 processes,
# 1 Hz, D seconds each, steady state: WARM=1, archives created in a first
# run that is reported too), then one table: ergd's CPU per sample (one
# agent message of P processes) and per process-sample, CPU share of a
# core, RSS at the end and peak, lost messages, grid drops (late/future
# node-seconds) and dropped store writes. Every figure covers ergd's whole
# process (loop, ZeroMQ I/O thread, store writer thread).
# usage: collector_sweep.sh [--port-base PORT] BUILD_DIR [P=100] [D=30] [NODES="100 1000 5000"]
# Ports: PORT .. PORT+8*k+7 for the k-th size (collector_bench.sh's 8 each),
# or ERG_BENCH_PORT_BASE; tests/bench/bench_lib.sh.
# 5,000 nodes need RLIMIT_NOFILE >= ~15,000 (hard limit) for the
# generator's sockets; ergd takes up to ERG_MAX_NODES (16,384) nodes.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"
B=$1; P=${2:-100}; D=${3:-30}; SIZES=${4:-100 1000 5000}
out=$(mktemp /tmp/erg-csweep.XXXXXX)
trap 'rm -f "$out"' EXIT
k=0
for n in $SIZES; do
  echo "===== $n nodes x $P processes, ${D} s"
  WARM=1 SINK=0 IDLE_S=${IDLE_S:-5} "$(dirname "$0")/collector_bench.sh" \
    --port-base $((ERG_BENCH_PORT_BASE + 8 * k)) "$B" "$n" "$P" "$D" | tee -a "$out"
  k=$((k + 1))
done
echo
echo "| nodes | run | CPU/sample | CPU/process-sample | core | RSS (peak) | lost msgs | late/future node-s | store dropped |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
awk '/^summary / {
  for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  printf "| %s | %s | %s us | %s us | %s | %.0f MB (%.0f) | %s | %s/%s | %s |\n", v["nodes"],
    v["run"] == 1 ? "fresh" : "archives exist", v["cpu_per_sample_us"], v["cpu_per_proc_sample_us"],
    v["core"], v["rss_kb"] / 1000, v["peak_kb"] / 1000, v["lost"], v["late"], v["future"],
    v["store_dropped"] }' "$out"
