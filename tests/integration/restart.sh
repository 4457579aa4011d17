#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Restarts: while ergd is down the agent buffers its samples and delivers
# them when ergd is back, so the cells of the outage still get agent data;
# every cell is journalled once, in order; a second agent claiming the same
# node is refused and counted instead of doubling the node's CPU time; the
# curve's tails' window chosen in the last run (JOURNAL_DIR/NODE.tailwin,
# written here while ergd is down) is in use after the restart.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
for t in curl python3 rrdtool; do command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }; done
erg_setup restart
erg_ports
erg_ergd_conf <<CONF
settle_steps = 1
poll_seconds = 0.5
$(erg_sim_meter)
[node.rs-node]
power = sim
idle_watts = 40
CONF
erg_start_pdusim --node rs-node --update 0.5
erg_start_ergd "$work/ergd1.log"
ergd=$ERGD_PID
erg_start_agent rs-node --interval 1
# A command that ends before the restart: after it, its archive must still
# get explicit 0 W (ergd reads its known keys back from the store). A name
# of its own: other tests on the machine run sha256sum too.
burn=rsburn$$
cp "$(command -v sha256sum)" "$work/$burn"
sleep 1
timeout 5 "$work/$burn" /dev/zero &
pids+=($!)
# ergd1 must finalise the burner's cells before it dies: they end by agent
# start + 10 s and close settle_steps (5 s) later. (Before the write-ahead
# log and the agent's resend, samples ergd1 had not finalised were lost with
# it; at 11 s the burner's cells were lost about one run in five, depending
# on where agent start fell in the 5-s grid: "no rsburn archive". Losses on
# a restart are tested by durable.sh.)
sleep 16
kill $ergd; wait $ergd || true
down=$(date +%s)
printf 'erg-tailwin 1 chosen=2 update_seconds=0.500000 chosen_unix_seconds=%s\n' "$down" \
  >"$work/data/journal/rs-node.tailwin"
sleep 10
up=$(date +%s)
erg_start_ergd "$work/ergd2.log"
sleep 14
grep -q "rs-node: the curve's tails from windows of 1 meter update(s) (from the last run" "$work/ergd2.log" ||
  { echo "FAIL: the kept tails' window not restored"; grep -i tail "$work/ergd2.log"; exit 1; }
# A second agent for the same node: refused and counted.
erg_start_agent rs-node --interval 1
dup=$!
sleep 4
kill $dup; wait $dup 2>/dev/null || true
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
overlap=$(awk '/^erg_agent_overlapping_samples_total\{node="rs-node"\}/ {print $2}' "$work/metrics.txt")
[ "${overlap:-0}" -ge 1 ] || { echo "FAIL: duplicate agent not refused"; cat "$work/metrics.txt"; exit 1; }
# The first update after the outage is unknown to RRD (gap > heartbeat);
# the ones after it must be 0 W, not unknown.
sleep 5
sha=$(key_rrd "$work/data/nodes/rs-node/command" "$burn")
[ -n "$sha" ] || { echo "FAIL: no $burn archive"; exit 1; }
rrdtool fetch "$sha" AVERAGE -r 5 -s "$up" -e now | awk -F': ' 'NF == 2 && $2 + 0 == 0 && $2 !~ /nan/ { z++ } END { exit z >= 1 ? 0 : 1 }' ||
  { echo "FAIL: $burn not written as 0 W after the restart"; rrdtool fetch "$sha" AVERAGE -r 5 -s $((down - 20)) -e now; exit 1; }
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
