#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A node fed by two outlets (dual PSUs, power = sim:1 + sim:2): its measured
# power in the journal is the SUM of both units' power as erg-pdusim's truth
# log has it (once ergd averaged them: half of it). A node whose second feed
# is a dead meter gets no measured power at all (marked missing), never the
# live outlet alone.
set -euo pipefail
PDUSIM=$1 ERGD=$2
. "$(dirname "$0")/lib.sh"
erg_need python3
erg_setup dual_feed
erg_ports
dead=$(free_port)
erg_ergd_conf <<CONF
settle_steps = 1
poll_seconds = 0.5
$(erg_sim_meter)
[meter.dead]
driver = modbus
host = 127.0.0.1
port = $dead
profile = erg-sim
timeout_seconds = 0.2
[node.dual]
power = sim:1 + sim:2
[node.halfdead]
power = sim:3 + dead:1
CONF
erg_start_pdusim --node u1 --node u2 --node u3 --idle 80 --slope 50 --update 0.5 \
  --truth "$work/truth.csv"
erg_start_ergd
sleep 32
kill "$ERGD_PID"; wait "$ERGD_PID" || true
python3 - "$work/data/journal" "$work/truth.csv" "$(dirname "$0")/../accuracy" <<'PY'
import math, sys
jdir, truth_csv = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import truth

def journal(node):
    rows = []
    for line in open(f"{jdir}/{node}.csv"):
        if line[0].isdigit():
            t, step, w, flags = line.split(",")[:4]
            rows.append((int(t), int(step), float(w), int(flags)))
    return rows

energy, span = truth.meter_energy(truth_csv)

def mean_watts(name, t0, step):
    return truth.mean_watts(energy, name, t0, step)

# Cells wholly inside the truth log (the first may start before erg-pdusim).
t_lo, t_hi = span("u1")
dual = [r for r in journal("dual") if not r[3] & 1 and t_lo <= r[0] and r[0] + r[1] < t_hi]
assert len(dual) >= 3, f"too few measured cells of dual: {journal('dual')}"
worst = 0
for t0, step, w, _ in dual:
    want = mean_watts("u1", t0, step) + mean_watts("u2", t0, step)
    # Polls every 0.5 s smear a cell's edges a little; the mean of the
    # outlets would be ~50% off.
    assert abs(w - want) <= 0.05 * want, f"cell {t0}: dual measured {w:.1f} W, truth sum {want:.1f} W"
    worst = max(worst, abs(w - want) / want)
print(f"ok: {len(dual)} cells of dual equal the sum of its outlets (worst {100 * worst:.2f}%)")
half = journal("halfdead")
assert len(half) >= 3, "too few cells of halfdead"
bad = [r for r in half if not (r[3] & 1) or not math.isnan(r[2])]
assert not bad, f"halfdead has measured power with a dead feed: {bad}"
print(f"ok: {len(half)} cells of halfdead all marked missing")
PY
