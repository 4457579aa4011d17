#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# RRD updates/s with and without rrdcached (not a ctest test). rrd_bench
# (tests/bench/rrd_bench.c) makes the store calls of ergd's writer thread
# in one thread: it creates NODES node.rrd files (6 data sources, ergd's
# RRAs, DAYS at step resolution), then updates each once per round for
# ROUNDS rounds. Run 1 writes the files directly (librrd, mmap); run 2 sends
# the updates to a private rrdcached (-w 300 -z 60 as in docs/store.md) on a
# unix socket and then times a FLUSH of every file. Each figure says what it includes:
#   create   rrd_create of every file (disk writes of the whole file) + 1st update
#   update   rrd_update_r per cell (direct) / rrdc_update (accepted by the daemon)
#   cpu      this process's user+sys CPU; rrdcached's own CPU is printed apart
#   flush    rrdcached writing everything it holds (FLUSH of each file), wall time
# usage: rrd_bench.sh [--port-base PORT] BUILD_DIR [NODES=500] [ROUNDS=20] [STEP=5] [DAYS=2]
# Ports: none (rrdcached listens on a unix socket in the temp dir); --port-base
# / ERG_BENCH_PORT_BASE are accepted and unused, like the other benchmarks'.
set -euo pipefail
if [ "${1:-}" = --port-base ]; then shift 2; fi
B=$1; NODES=${2:-500}; ROUNDS=${3:-20}; STEP=${4:-5}; DAYS=${5:-2}
BENCH=$B/tests/bench/rrd_bench
command -v rrdcached >/dev/null || { echo "need rrdcached (apt-get install rrdcached)" >&2; exit 1; }
work=$(mktemp -d /tmp/erg-rrdbench.XXXXXX)
RP=""
cleanup() { [ -n "$RP" ] && kill "$RP" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
TCK=$(getconf CLK_TCK)
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(df -T "$work" | awk 'NR == 2 { print $2 }') at $work"
echo "== direct file writes"
"$BENCH" "$work/direct" "$NODES" "$ROUNDS" "$STEP" "$DAYS"
echo "data: $(du -sh "$work/direct" | cut -f1)"
echo "== through rrdcached"
mkdir -p "$work/cached"
rrdcached -g -l "unix:$work/rrdcached.sock" -b "$work/cached" -B -w 300 -z 60 -f 3600 \
  -p "$work/rrdcached.pid" >"$work/rrdcached.log" 2>&1 &
RP=$!
for _ in $(seq 1 50); do [ -S "$work/rrdcached.sock" ] && break; sleep 0.1; done
"$BENCH" "$work/cached" "$NODES" "$ROUNDS" "$STEP" "$DAYS" "unix:$work/rrdcached.sock"
echo "rrdcached cpu: $(awk -v t="$TCK" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$RP/stat") s" \
     "(all of its work: accepting, and writing at the flush)"
