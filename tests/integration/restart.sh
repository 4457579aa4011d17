#!/usr/bin/env bash
# Restarts: while ergd is down the agent buffers its samples and delivers
# them when ergd is back, so the cells of the outage still get agent data;
# every cell is journalled once, in order; a second agent claiming the same
# node is refused and counted instead of doubling the node's CPU time.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
for t in curl python3 rrdtool; do command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }; done
work=$(mktemp -d /tmp/erg-restart.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
MB=$(free_port); ZP=$(free_port); HP=$(free_port)
cat >"$work/ergd.conf" <<CONF
[collector]
listen = tcp://127.0.0.1:$ZP
http = 127.0.0.1:$HP
data_dir = $work/data
settle_steps = 1
poll_seconds = 0.5
[meter.sim]
port = $MB
host = 127.0.0.1
profile = erg-sim
[node.rs-node]
power = sim
idle_watts = 40
CONF
"$PDUSIM" --modbus 127.0.0.1:$MB --node rs-node --update 0.5 >/dev/null 2>&1 &
pids+=($!)
wait_port "$MB"
"$ERGD" -c "$work/ergd.conf" 2>"$work/ergd1.log" &
ergd=$!
wait_port "$HP"
"$AGENT" --node rs-node --collector tcp://127.0.0.1:$ZP --interval 1 2>"$work/agent.log" &
pids+=($!)
sleep 12
kill $ergd; wait $ergd || true
down=$(date +%s)
sleep 10
up=$(date +%s)
"$ERGD" -c "$work/ergd.conf" 2>"$work/ergd2.log" &
ergd=$!
pids+=($ergd)
wait_port "$HP"
sleep 14
# A second agent for the same node: refused and counted.
"$AGENT" --node rs-node --collector tcp://127.0.0.1:$ZP --interval 1 2>/dev/null &
dup=$!
sleep 4
kill $dup; wait $dup 2>/dev/null || true
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
overlap=$(awk '/^erg_agent_overlapping_samples_total\{node="rs-node"\}/ {print $2}' "$work/metrics.txt")
[ "${overlap:-0}" -ge 1 ] || { echo "FAIL: duplicate agent not refused"; cat "$work/metrics.txt"; exit 1; }
python3 - "$work/data/journal" "$down" "$up" <<'PY'
import glob, sys
jdir, down, up = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for f in sorted(glob.glob(jdir + "/*.csv*")):
    for line in open(f):
        if line[0].isdigit():
            t, step, w, flags, cpu = line.strip().split(",")[:5]
            rows.append((int(t), int(flags), float(cpu)))
times = [r[0] for r in rows]
assert times == sorted(times) and len(times) == len(set(times)), "journal not once-in-order"
# Cells wholly inside the outage: agent data arrived late but whole.
outage = [r for r in rows if r[0] >= down and r[0] + 5 <= up]
assert len(outage) >= 1, f"no journal rows for the outage {down}..{up}: {times}"
with_agent = [r for r in outage if not (r[1] & 2)]
assert len(with_agent) == len(outage), f"outage cells without agent data: {outage}"
assert all(r[2] >= 0 for r in rows)
# No cell has more busy CPU than the machine has (no double counting).
import os
ncpu = os.cpu_count()
assert max(r[2] for r in rows) <= ncpu + 0.05, max(r[2] for r in rows)
print(f"ok: {len(rows)} cells, {len(outage)} in the outage all with agent data")
PY
