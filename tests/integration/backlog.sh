#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# An agent's backlog after a long collector outage: collector_load sends,
# for one node, the 1,200 one-second samples of the last 20 minutes as fast
# as they go (in order, as an agent's queue does), then a few live ones.
# The grid holds 128 cells (640 s at a 5 s step) open; ergd must close the
# complete old cells to make room instead of dropping the rest of the
# backlog as "future": no future drops, and every backlog cell in the
# journal with agent data and the node's CPU time.
# usage: backlog.sh ERGD COLLECTOR_LOAD
set -euo pipefail
ERGD=$1 LOAD=$2
. "$(dirname "$0")/lib.sh"
for tool in ss python3 curl; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
erg_setup backlog
erg_ports
erg_ergd_conf <<CONF
step_seconds = 5
settle_steps = 1
lag_max_seconds = 0
CONF
erg_start_ergd
B=1200
t_start=$(date +%s)
"$LOAD" "tcp://127.0.0.1:$ZP" 1 5 3 blk "$B" >"$work/load.log" 2>&1 || { cat "$work/load.log"; exit 1; }
cat "$work/load.log"
sleep 12 # the live cells settle
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
python3 - "$work" "$t_start" "$B" <<'PY'
import sys
work, t_start, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
drops = {}
for l in open(f"{work}/metrics.txt"):
    if l.startswith('erg_grid_dropped_seconds_total{node="blk00000"'):
        drops[l.split('reason="')[1].split('"')[0]] = float(l.split()[-1])
assert drops.get("future") == 0, drops
rows = []
for l in open(f"{work}/data/journal/blk00000.csv"):
    f = l.strip().split(",")
    if l.startswith("#") or f[0] == "time_unix_seconds":
        continue
    rows.append((int(f[0]), int(f[3]), float(f[4])))
# Cells wholly inside the backlog (the first one starts mid-cell).
first = (t_start - B) // 5 * 5 + 5
backlog = [r for r in rows if first <= r[0] and r[0] + 5 <= t_start - 5]
with_agent = [r for r in backlog if not r[1] & 2]
want = (t_start - 5 - first) // 5
assert len(with_agent) >= want - 2, (len(with_agent), want, drops)
# collector_load's busy time: 4 x 0.5-1.5 s + 1 x <0.02 s + 0.03 s per second.
cpu = [r[2] for r in with_agent]
assert all(1.5 < c < 6.5 for c in cpu), (min(cpu), max(cpu))
print(f"ok: {len(with_agent)} of {want} backlog cells with agent data, drops {drops}")
PY
