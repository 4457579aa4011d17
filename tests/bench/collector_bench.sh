#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Collector scale benchmark (not a ctest test). collector_load impersonates N
# agents (one ZeroMQ connection each) sending 1 Hz samples of P processes for
# D seconds to: ergd (no meters, temp data dir), then the reference peer, a
# bare ZeroMQ PULL sink (collector_sink), plain and with --decode. Reports
# sustained process-samples/s, CPU (fraction of one core), RSS, loss, and
# erg's CPU per process-sample relative to the sink's. After the load, ergd
# is kept IDLE_S seconds with all N nodes known but silent: its CPU and
# writes then are the store's per-cell cost alone (journal + node.rrd).
# usage: collector_bench.sh [--port-base PORT] BUILD_DIR [N=2000] [P=100] [D=60]
# Ports: PORT .. PORT+7 (or ERG_BENCH_PORT_BASE; tests/bench/bench_lib.sh):
#      +0 meters (METERS=1), +1..+4 ergd agents/http (two runs with WARM=1),
#      +5 sink, +6 sink --decode.
# env: WARM=1 runs ergd twice on the same data dir: the first run creates
#      every archive (rrd_create of each node.rrd), the second is steady state;
#      PERF=1 records ergd with perf (cpu-clock, call graphs) into $OUT;
#      OUT=dir keeps logs and reports (default: a temp dir, removed);
#      RRDCACHED=1 writes through a private rrdcached (-w 300 -z 60);
#      IDLE_S=30; SINK=0 skips the sink runs;
#      ARCHIVE_DAYS="D1 D2 D3 D4" sets ergd's archive_days (default retention
#      otherwise: 6.5 MB per node.rrd, 32 GB for 5,000 fresh nodes);
#      ERGD_CONF="key = value" adds a [collector] line (unc_cost.sh:
#      energy_intervals = false);
#      COLD=1 evicts the data dir's files from the page cache before the
#      second run (WARM=1): a restart on a busy host, where other I/O pushed
#      the archives out, reads every node's stored state from the disk;
#      METERS=1 gives every node a simulated meter (erg-pdusim, one Modbus
#      unit per node, N <= 64), so cells are attributed and every node writes
#      its profile key archives of all kinds (the rest of the store's work).
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"
B=$1; N=${2:-2000}; P=${3:-100}; D=${4:-60}
IDLE_S=${IDLE_S:-30}; PERF=${PERF:-0}; SINK=${SINK:-1}
LOAD=$B/tests/bench/collector_load; SINKBIN=$B/tests/bench/collector_sink; ERGD=$B/collector/ergd
PDUSIM=$B/pdusim/erg-pdusim; METERS=${METERS:-0}
. "$(dirname "$0")/../integration/lib.sh"
for t in curl awk ss; do command -v $t >/dev/null || { echo "need $t" >&2; exit 1; }; done
work=$(mktemp -d /tmp/erg-cbench.XXXXXX)
OUT=${OUT:-$work}; mkdir -p "$OUT"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
TCK=$(getconf CLK_TCK)

cpu_s() { awk -v t="$TCK" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
io_field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/io"; }
metric() { curl -sf "http://127.0.0.1:$HP/metrics" | awk -v m="$1" '$1 == m { s += $2 } END { printf "%d", s }'; }
# Refused messages, every reason (erg_agent_messages_total{result="rejected",reason=...}).
rejected() { curl -sf "http://127.0.0.1:$HP/metrics" | awk 'index($1, "erg_agent_messages_total{result=\"rejected\"") == 1 { s += $2 } END { printf "%d", s }'; }
sum_metric() { curl -sf "http://127.0.0.1:$HP/metrics" | awk -v m="$1" 'index($1, m "{") == 1 { s += $2 } END { printf "%d", s }'; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

# Waits until erg_agent_messages_total{ok+rejected} reaches $1 or stops
# moving for 5 s; sets DONE_AT to the time the count last grew.
drain_ergd() {
  local want=$1 last=-1 still=0 got
  DONE_AT=$(now)
  while [ $still -lt 10 ]; do
    got=$(($(metric 'erg_agent_messages_total{result="ok"}') - ${OK0:-0} +
           $(rejected)))
    [ "$got" != "$last" ] && { DONE_AT=$(now); still=0; last=$got; } || still=$((still + 1))
    [ "$got" -ge "$want" ] && break
    sleep 0.5
  done
}

# A private rrdcached for the store; ergd finds it via RRDCACHED_ADDRESS.
start_rrdcached() {
  mkdir -p "$work/data"
  rrdcached -g -l "unix:$work/rrdcached.sock" -b "$work/data" -B -w 300 -z 60 -f 3600 \
    -p "$work/rrdcached.pid" >"$OUT/rrdcached.log" 2>&1 &
  RP=$!; pids+=("$RP")
  for _ in $(seq 1 50); do [ -S "$work/rrdcached.sock" ] && break; sleep 0.1; done
  export RRDCACHED_ADDRESS="unix:$work/rrdcached.sock"
}

# One simulated meter per node (Modbus unit i+1 = node i, whole-machine load).
start_meters() {
  [ "$N" -le 64 ] || { echo "METERS=1 needs N <= 64 (erg-pdusim nodes)" >&2; exit 1; }
  MB=$(bench_port 0)
  local args=() i
  for i in $(seq 0 $((N - 1))); do args+=(--node "$(printf 'bench%05d' "$i")"); done
  "$PDUSIM" --modbus "127.0.0.1:$MB" "${args[@]}" --idle 100 --slope 200 --update 0.5 \
    >"$OUT/pdusim.log" 2>&1 &
  pids+=($!)
  wait_port "$MB"
}
meter_conf() {
  printf 'poll_seconds = 1\n[meter.sim]\ndriver = modbus\nhost = 127.0.0.1\nport = %s\nprofile = erg-sim\n' "$MB"
  local i
  for i in $(seq 0 $((N - 1))); do
    printf '[node.bench%05d]\npower = sim:%d\nidle_watts = 90\n' "$i" $((i + 1))
  done
}

# Drops the data dir's files from the page cache (this dir only: fadvise).
evict_data() {
  find "$work/data" -type f -print0 | python3 -c '
import os, sys
for p in sys.stdin.buffer.read().split(b"\0"):
    if p:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)'
}

run_ergd() {
  echo "-- ergd ($1)"
  [ "${RUN:-0}" -ge 1 ] && [ "${COLD:-0}" = 1 ] && { sync; evict_data; echo "(page cache of the data dir dropped)"; }
  RUN=$((${RUN:-0} + 1))
  ZP=$(bench_port $((2 * RUN - 1))); HP=$(bench_port $((2 * RUN)))
  cat >"$work/ergd.conf" <<CONF
[collector]
listen = tcp://127.0.0.1:$ZP
http = 127.0.0.1:$HP
data_dir = $work/data
CONF
  [ -n "${ARCHIVE_DAYS:-}" ] && echo "archive_days = $ARCHIVE_DAYS" >>"$work/ergd.conf"
  [ -n "${ERGD_CONF:-}" ] && echo "$ERGD_CONF" >>"$work/ergd.conf"
  [ "$METERS" = 1 ] && meter_conf >>"$work/ergd.conf"
  "$ERGD" -c "$work/ergd.conf" --log-level warn 2>"$OUT/ergd-$RUN.log" &
  EP=$!; pids+=("$EP")
  # A restart first replays the WAL and reads the replayed nodes' state
  # (before it listens): minutes for thousands of nodes on a cold cache.
  local s0; s0=$(now)
  wait_port "$HP" 600; wait_port "$ZP" 60
  echo "ergd listening after $(calc %.1f "$(now) - $s0") s"
  local c0 w0 t0 perfpid=""
  c0=$(cpu_s $EP); w0=$(io_field $EP wchar); t0=$(now)
  # Inputs replayed from the write-ahead log at start count as ok too.
  OK0=$(metric 'erg_agent_messages_total{result="ok"}')
  if [ "$PERF" = 1 ]; then
    (sleep 5; exec perf record -q -e cpu-clock -g -p "$EP" -o "$OUT/perf.data" -- sleep $((D - 10))) \
      >"$OUT/perf-record.log" 2>&1 &
    perfpid=$!
  fi
  "$LOAD" "tcp://127.0.0.1:$ZP" "$N" "$P" "$D" "bench" | tee "$OUT/load-ergd-$RUN.txt"
  local sent; sent=$(sed -n 's/.*sent messages=\([0-9]*\).*/\1/p' "$OUT/load-ergd-$RUN.txt")
  drain_ergd "$sent"
  local c1 w1 ok rej wall late fut over
  c1=$(cpu_s $EP); w1=$(io_field $EP wchar)
  ok=$(($(metric 'erg_agent_messages_total{result="ok"}') - OK0))
  rej=$(rejected)
  late=$(curl -sf "http://127.0.0.1:$HP/metrics" | awk '/^erg_grid_dropped_seconds_total.*reason="late"/ { s += $2 } END { printf "%d", s }')
  fut=$(curl -sf "http://127.0.0.1:$HP/metrics" | awk '/^erg_grid_dropped_seconds_total.*reason="future"/ { s += $2 } END { printf "%d", s }')
  over=$(sum_metric erg_agent_overlapping_samples_total)
  wall=$(calc %.2f "$DONE_AT - $t0")
  local psent; psent=$(sed -n 's/.*proc_samples=\([0-9]*\).*/\1/p' "$OUT/load-ergd-$RUN.txt")
  local precv=$(( (ok - N) * P ))
  [ -n "$perfpid" ] && wait "$perfpid" || true
  echo "ergd: messages sent=$sent ok=$ok rejected=$rej lost=$((sent - ok - rej))" \
       "grid_dropped_node_s late=$late future=$fut overlapping=$over" \
       "store pending=$(metric erg_store_pending_writes) dropped=$(metric erg_store_dropped_writes_total)"
  echo "ergd: load phase ${wall}s (generator ${D}s + drain), cpu $(calc %.2f "$c1 - $c0")s" \
       "= $(calc %.3f "($c1 - $c0) / $wall") core, process-samples/s $(calc %.0f "$precv / $wall")" \
       "(sent $psent), RSS $(status_kb $EP VmRSS) kB, peak $(status_kb $EP VmHWM) kB," \
       "wchar $(( (w1 - w0) >> 20 )) MiB"
  ERG_CPU_PER=$(calc %.6e "($c1 - $c0) / $precv")
  # One line per run for collector_sweep.sh: CPU per sample (a message of P
  # processes) and per process-sample, both over the load phase (decode,
  # grid, finalise, journal, queueing the store writes; the writer thread's
  # archive creation/updates too, as it is ergd's CPU).
  echo "summary run=$RUN nodes=$N procs=$P" \
       "cpu_per_sample_us=$(calc %.1f "($c1 - $c0) / ($ok - N) * 1e6")" \
       "cpu_per_proc_sample_us=$(calc %.3f "($c1 - $c0) / $precv * 1e6")" \
       "core=$(calc %.3f "($c1 - $c0) / $wall") rss_kb=$(status_kb $EP VmRSS)" \
       "peak_kb=$(status_kb $EP VmHWM) lost=$((sent - ok - rej)) late=$late future=$fut" \
       "store_dropped=$(metric erg_store_dropped_writes_total)"
  # Silent phase: N nodes known, no samples; only finalise + store work.
  c0=$(cpu_s $EP); w0=$(io_field $EP wchar)
  local wb0; wb0=$(io_field $EP write_bytes)
  sleep "$IDLE_S"
  c1=$(cpu_s $EP); w1=$(io_field $EP wchar)
  local wb1; wb1=$(io_field $EP write_bytes)
  echo "ergd silent ${IDLE_S}s, $N nodes: cpu $(calc %.2f "$c1 - $c0")s" \
       "= $(calc %.3f "($c1 - $c0) / $IDLE_S") core, wchar $(( (w1 - w0) >> 10 )) KiB," \
       "write_bytes $(( (wb1 - wb0) >> 10 )) KiB; data dir $(du -sh "$work/data" | cut -f1)," \
       "$(find "$work/data" -name '*.rrd' | wc -l) rrd files"
  [ -n "${RP:-}" ] && echo "rrdcached so far: cpu $(cpu_s "$RP")s," \
    "write_bytes $(( $(io_field "$RP" write_bytes) >> 20 )) MiB"
  kill "$EP"; wait "$EP" 2>/dev/null || true
}

run_sink() {
  local tag=$1 flag=${2:-} port
  port=$(bench_port $([ -z "$flag" ] && echo 5 || echo 6))
  "$SINKBIN" "tcp://127.0.0.1:$port" 3 $flag >"$OUT/sink-$tag.txt" &
  local sp=$!; pids+=("$sp")
  wait_port "$port"
  "$LOAD" "tcp://127.0.0.1:$port" "$N" "$P" "$D" >"$OUT/load-$tag.txt"
  wait "$sp" || true
  local sent got cpu
  sent=$(sed -n 's/.*sent messages=\([0-9]*\).*/\1/p' "$OUT/load-$tag.txt")
  got=$(sed -n 's/.*sink messages=\([0-9]*\).*/\1/p' "$OUT/sink-$tag.txt")
  cpu=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$OUT/sink-$tag.txt")
  local precv=$(( (got - N) * P ))
  echo "sink $tag: messages sent=$sent received=$got lost=$((sent - got)), cpu ${cpu}s" \
       "= $(calc %.3f "$cpu / $D") core; erg/sink CPU per process-sample:" \
       "$(calc %.1f "$ERG_CPU_PER / ($cpu / $precv)") x"
}

echo "== $N agents x $P processes, 1 Hz, ${D}s ($(nproc) CPUs, $(uname -r))"
[ "${RRDCACHED:-0}" = 1 ] && start_rrdcached
[ "$METERS" = 1 ] && start_meters
run_ergd "fresh data dir"
[ "${WARM:-0}" = 1 ] && run_ergd "archives exist"
if [ "$SINK" = 1 ]; then
  run_sink plain
  run_sink decode --decode
fi
if [ "$PERF" = 1 ] && [ -s "$OUT/perf.data" ]; then
  perf report -i "$OUT/perf.data" --stdio --no-children -g none --sort dso,symbol --percent-limit 0.7 \
    2>/dev/null | grep -v '^$' >"$OUT/perf-self.txt" || true
  perf report -i "$OUT/perf.data" --stdio --children --sort symbol --percent-limit 2 -g none \
    2>/dev/null | grep -v '^$' >"$OUT/perf-children.txt" || true
  echo "perf reports: $OUT/perf-self.txt $OUT/perf-children.txt"
fi
