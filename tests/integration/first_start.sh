#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# First start at scale: NODES new nodes (default 2,000) send 1-s samples to
# an ergd with an empty data dir and a 2-s step for SECONDS (default 60),
# so every node's archive is created while ingest goes on. Nothing may be
# lost: every message accepted, no input dropped by the grid (late or
# future), no archive update dropped or failed, every node's cells in its
# journal without a hole, and its node.rrd holding each of those cells up to
# the last one (read back with rrdtool after ergd wrote its queue and exited).
# Archives are kept short (archive_days: 0.25 day at step resolution, ~1 MB
# per node) so the test writes ~2 GB, not the 23 GB of the default
# retention at this step; creation is then ~1 MB per node of writes.
# usage: first_start.sh ERGD COLLECTOR_LOAD [NODES=2000] [SECONDS=60]
set -euo pipefail
ERGD=$1 LOAD=$2 NODES=${3:-2000} SECONDS_LOAD=${4:-60}
STEP=2
. "$(dirname "$0")/lib.sh"
erg_need ss python3 curl rrdtool
erg_setup first-start
erg_ports
erg_ergd_conf <<CONF
step_seconds = $STEP
settle_steps = 2
lag_max_seconds = 0
archive_days = 0.25 0 0 0
page_interval_seconds = 3600
max_unconfigured_nodes = $NODES
CONF
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge $((NODES * 3 + 256)) ] ||
  { echo "SKIP: RLIMIT_NOFILE $(ulimit -n) too low for $NODES agent connections"; exit 77; }
erg_start_ergd
t_start=$(date +%s)
"$LOAD" "tcp://127.0.0.1:$ZP" "$NODES" 10 "$SECONDS_LOAD" fs >"$work/load.log" 2>&1 ||
  { cat "$work/load.log"; exit 1; }
t_end=$(date +%s)
cat "$work/load.log"
sent=$(sed -n 's/.*sent messages=\([0-9]*\).*/\1/p' "$work/load.log")

metric_sum() { curl -sf "http://127.0.0.1:$HP/metrics" | awk -v m="$1" \
  'index($1, m) == 1 && (length($1) == length(m) || substr($1, length(m) + 1, 1) == "{") \
   { s += $2 } END { printf "%d", s }'; }
# Everything received, then the last cells settle (settle 2 steps + 1).
for _ in $(seq 1 60); do
  [ "$(metric_sum erg_agent_messages_total)" -ge "$sent" ] && break
  sleep 1
done
sleep $((STEP * 4))
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
# SIGTERM: ergd writes its queue of archive updates, then exits.
kill -TERM "$ERGD_PID"
for _ in $(seq 1 180); do kill -0 "$ERGD_PID" 2>/dev/null || break; sleep 1; done
if kill -0 "$ERGD_PID" 2>/dev/null; then
  echo "FAIL: ergd still writing its queue 180 s after SIGTERM"; exit 1
fi
wait "$ERGD_PID" || { echo "FAIL: ergd exited with $?"; tail "$work/ergd.log"; exit 1; }
echo "load $t_start..$t_end, ergd stopped at $(date +%s); data $(du -sh "$work/data" | cut -f1)"
python3 - "$work" "$sent" "$NODES" "$STEP" "$t_start" "$t_end" <<'PY'
import math, os, subprocess, sys
work, sent, nodes, step, t_start, t_end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
m = {}
for l in open(f"{work}/metrics.txt"):
    if l.startswith("#") or not l.strip():
        continue
    name, v = l.rsplit(" ", 1)
    base = name.split("{")[0]
    m[base] = m.get(base, 0) + float(v)
    m[name] = float(v)
fails = []
def want(cond, what):
    if not cond:
        fails.append(what)
ok = m.get('erg_agent_messages_total{result="ok"}')
want(ok == sent, f"messages ok {ok} != sent {sent}")
rejected = {k: v for k, v in m.items()
            if k.startswith('erg_agent_messages_total{result="rejected"') and v}
want(not rejected, f"rejected messages {rejected}")
want(m.get("erg_grid_dropped_seconds_total", 0) == 0,
     f"grid dropped {m.get('erg_grid_dropped_seconds_total')} node-s (late/future)")
want(m.get("erg_store_dropped_writes_total", 0) == 0,
     f"store dropped {m.get('erg_store_dropped_writes_total')} writes")
want(m.get("erg_store_errors_total", 0) == 0, f"store errors {m.get('erg_store_errors_total')}")

# Journal: each node's cells with agent data, from its second cell (the
# first starts before the node's first sample) to its last, without holes.
# The load ran from t_start + 1 to t_end: at least this many whole cells.
need = (t_end - t_start - 1) // step - 3
rrd_cmds, cells_of = [], {}
for i in range(nodes):
    name = f"fs{i:05d}"
    path = f"{work}/data/journal/{name}.csv"
    if not os.path.exists(path):
        fails.append(f"{name}: no journal")
        continue
    rows = []
    for l in open(path):
        f = l.strip().split(",")
        if l.startswith("#") or f[0] == "time_unix_seconds":
            continue
        rows.append((int(f[0]), int(f[3])))
    agent = [t for t, flags in rows if not flags & 2]
    if len(agent) < need or agent[-1] - agent[0] != (len(agent) - 1) * step:
        fails.append(f"{name}: {len(agent)} cells with agent data (want >= {need}, no holes)")
        continue
    cells_of[name] = agent
    rrd = f"{work}/data/nodes/{name}/node.rrd"
    rrd_cmds.append(f"lastupdate {rrd}")
    rrd_cmds.append(f"fetch {rrd} AVERAGE -r {step} -s {agent[0]} -e {agent[-1] + step}")
# Archives: one rrdtool process for all, in pipe mode ("OK ..." ends each answer).
out = subprocess.run(["rrdtool", "-"], input="\n".join(rrd_cmds) + "\n", text=True,
                     capture_output=True).stdout
answers, cur = [], []
for l in out.splitlines():
    if l.startswith("OK ") or l.startswith("ERROR"):
        answers.append((l, cur))
        cur = []
    else:
        cur.append(l)
names = list(cells_of)
if len(answers) != 2 * len(names):
    fails.append(f"rrdtool answered {len(answers)} of {2 * len(names)} commands: "
                 f"{[a for a, _ in answers if a.startswith('ERROR')][:3]}")
for k, name in enumerate(names[:len(answers) // 2]):
    agent = cells_of[name]
    (s1, last), (s2, fetch) = answers[2 * k], answers[2 * k + 1]
    if s1.startswith("ERROR") or s2.startswith("ERROR"):
        fails.append(f"{name}: {s1} {s2}")
        continue
    t_last = int([l for l in last if ":" in l][-1].split(":")[0])
    known = set()
    for l in fetch:
        if ":" not in l:
            continue
        t, vals = l.split(":", 1)
        est = vals.split()[-1]
        if not math.isnan(float(est)):
            known.add(int(t))
    missing = [t + step for t in agent if t + step not in known]
    if t_last < agent[-1] + step or missing:
        fails.append(f"{name}: node.rrd last update {t_last} (want >= {agent[-1] + step}), "
                     f"{len(missing)} of {len(agent)} cells missing")
ncells = sum(len(v) for v in cells_of.values())
print(f"{len(cells_of)} of {nodes} nodes complete, {ncells} cells journalled and archived; "
      f"pending at the end of the load {m.get('erg_store_pending_writes')}")
for f in fails[:20]:
    print("FAIL:", f)
if len(fails) > 20:
    print(f"... {len(fails) - 20} more")
sys.exit(1 if fails else 0)
PY
