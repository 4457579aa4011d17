#!/usr/bin/env bash
# Restart at scale on a cold cache (issue 16): NODES nodes (default 2,000)
# send 1-s samples to ergd for a few seconds, so each has its archive,
# journal and key state; ergd stops, the data dir is dropped from the page
# cache (as other I/O does on a busy host), ergd starts again and the same
# nodes say hello at once and send for SECONDS (default 20). Each node met
# again reads its stored state (last archive update, journal tail, names,
# model, keys); on the loop thread that stalled ingest (5,000 nodes: 76 s
# for 10 s of messages, 83,080 node-s dropped as late). Every message
# must be taken, no held sample dropped, at most 2 % of the node-seconds
# dropped by the grid and 95 % of the nodes with every cell of the second
# run journalled (the old loop: 25-100 % dropped, no node complete).
# usage: restart_cold.sh ERGD COLLECTOR_LOAD [NODES=2000] [SECONDS=20]
set -euo pipefail
ERGD=$1 LOAD=$2 NODES=${3:-2000} SECONDS_LOAD=${4:-20}
STEP=1
. "$(dirname "$0")/lib.sh"
erg_need ss python3 curl
erg_setup restart-cold
erg_ports
erg_ergd_conf <<CONF
step_seconds = $STEP
settle_steps = 2
lag_max_seconds = 0
archive_days = 0.03 0 0 0
page_interval_seconds = 3600
CONF
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge $((NODES * 3 + 256)) ] ||
  { echo "SKIP: RLIMIT_NOFILE $(ulimit -n) too low for $NODES agent connections"; exit 77; }

metric_sum() { curl -sf "http://127.0.0.1:$HP/metrics" | awk -v m="$1" \
  'index($1, m) == 1 && (length($1) == length(m) || substr($1, length(m) + 1, 1) == "{") \
   { s += $2 } END { printf "%d", s }'; }
# Runs the generator, waits until ergd counted base + its messages.
load_run() {
  local secs=$1 base=$2 sent
  "$LOAD" "tcp://127.0.0.1:$ZP" "$NODES" 5 "$secs" rc >"$work/load.log" 2>&1 ||
    { cat "$work/load.log"; exit 1; }
  cat "$work/load.log"
  sent=$(sed -n 's/.*sent messages=\([0-9]*\).*/\1/p' "$work/load.log")
  for _ in $(seq 1 120); do
    [ "$(metric_sum 'erg_agent_messages_total{result="ok"}')" -ge $((base + sent)) ] && break
    sleep 1
  done
  SENT=$sent
}
stop_ergd() {
  kill -TERM "$ERGD_PID"
  for _ in $(seq 1 180); do kill -0 "$ERGD_PID" 2>/dev/null || break; sleep 1; done
  wait "$ERGD_PID" || { echo "FAIL: ergd exited with $?"; tail "$work/ergd.log"; exit 1; }
}

# Run 1: every node gets its archive, journal and known keys.
erg_start_ergd "$work/ergd-1.log"
load_run 6 0
sleep $((STEP * 4))
stop_ergd
# Only this test's files leave the cache (fadvise), not the machine's.
sync
find "$work/data" -type f -print0 | python3 -c '
import os, sys
for p in sys.stdin.buffer.read().split(b"\0"):
    if p:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)'
echo "run 1 done, data $(du -sh "$work/data" | cut -f1), page cache of it dropped"

# Run 2: all nodes at once against the cold store. WAL-replayed inputs are
# counted as messages at start, before the port opens: the base.
erg_start_ergd "$work/ergd-2.log"
base=$(metric_sum 'erg_agent_messages_total{result="ok"}')
t_start=$(date +%s)
load_run "$SECONDS_LOAD" "$base"
t_end=$(date +%s)
sleep $((STEP * 4))
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
stop_ergd
python3 - "$work" "$SENT" "$base" "$NODES" "$STEP" "$t_start" "$t_end" <<'PY'
import sys
work, sent, base, nodes, step, t_start, t_end = sys.argv[1], *map(int, sys.argv[2:])
m = {}
for l in open(f"{work}/metrics.txt"):
    if l.startswith("#") or not l.strip():
        continue
    name, v = l.rsplit(" ", 1)
    base_name = name.split("{")[0]
    m[base_name] = m.get(base_name, 0) + float(v)
    m[name] = float(v)
fails = []
def want(cond, what):
    if not cond:
        fails.append(what)
ok = m.get('erg_agent_messages_total{result="ok"}', 0) - base
want(ok == sent, f"messages taken {ok:.0f} != sent {sent}")
# A loop blocked on per-node reads drops most of the restart's first
# seconds (3,000 nodes: 25-100 % of all node-s); what is left on a loaded
# 2-core VM is sub-second jitter of a loop that is busy ~0.4 s per second
# at this size: a few node-s, bounded at 2 %.
dropped = m.get("erg_grid_dropped_seconds_total", 0)
want(dropped <= 0.02 * nodes * (t_end - t_start),
     f"grid dropped {dropped:.0f} node-s (late/future), more than 2 % of "
     f"{nodes * (t_end - t_start)}")
want(m.get('erg_node_load_held_total{result="dropped"}', 0) == 0, "held samples dropped")
want(m.get("erg_nodes_loading", 0) == 0, f"{m.get('erg_nodes_loading')} nodes still loading")
want(m.get("erg_store_dropped_writes_total", 0) == 0, "store writes dropped")
# Each node's cells of run 2 with agent data: from the first whole cell
# after the start to the last, no holes.
need = (t_end - t_start - 1) // step - 4
bad = 0
for i in range(nodes):
    name = f"rc{i:05d}"
    agent = []
    for l in open(f"{work}/data/journal/{name}.csv"):
        f = l.strip().split(",")
        if l.startswith("#") or f[0] == "time_unix_seconds":
            continue
        if int(f[0]) >= t_start and not int(f[3]) & 2:
            agent.append(int(f[0]))
    if len(agent) < need or agent[-1] - agent[0] != (len(agent) - 1) * step:
        bad += 1
        if bad <= 5:
            print(f"{name}: {len(agent)} cells with agent data after the restart "
                  f"(want >= {need}, no holes)")
want(bad <= 0.05 * nodes, f"{bad} of {nodes} nodes with missing cells (more than 5 %)")
held = m.get('erg_node_load_held_total{result="held"}', 0)
print(f"run 2: {ok:.0f} of {sent} messages, {held:.0f} held while loading, "
      f"{nodes - bad} of {nodes} nodes complete")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
