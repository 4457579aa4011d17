#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A meter with a coarse energy counter and NO power register (a float32
# kWh register at 6,000 kWh steps by 2^-11 kWh = 1,757.8 J: every 6-15 s at
# 120-300 W, more than a 5 s cell holds). Trusted reading by reading it
# gives cells of 0 W and then cells of hundreds of W too many; with no
# watts to fall back on, ergd must hold the counter while it stands still
# and spread each move's energy over the time since the previous move,
# keeping the cells open until it comes. Checks: no 0 W cell, few cells
# left without meter data, total energy and 20-s windows against the
# simulator's own energy (--truth), one log line, /metrics.
# Lag estimation is on (the default): moves 6-15 s apart cannot time a lag,
# and a chance peak of the flat spread used to be taken for one (7 s, then
# 1 s: energy -6.5 %, windows 9 %); ergd must say so once, take none, and
# leave the cells unflagged (flag 16 would keep the node out of every fit).
# usage: coarse_no_power.sh PDUSIM ERGD AGENT
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/../integration/lib.sh"
erg_need curl python3
erg_setup coarse-np
erg_ports
OFFSET=6000
erg_ergd_conf <<CONF
step_seconds = 5
poll_seconds = 0.5
[meter.gen]
driver = modbus
host = 127.0.0.1
port = $MB
profile = generic
unit_id = 1
energy_register = 4:0x48:float32
energy_scale_joules = 3600000
[node.np-node]
power = gen
CONF
erg_start_pdusim --node np-node --idle 120 --slope 180 --quantum 0.1 --update 1 \
  --energy-offset-kwh "$OFFSET" --truth "$work/truth.csv"
erg_start_ergd
erg_start_agent np-node --interval 0.5
# Load held 10..20 s at a time: 0, 1 or 2 busy processes.
RANDOM=5
end=$((SECONDS + 100))
while [ $SECONDS -lt $end ]; do
  n=$((RANDOM % 3)) d=$((10 + RANDOM % 11))
  for _ in $(seq 1 $n); do timeout $d sha256sum /dev/zero & done
  sleep $d
done
# The cells up to the load's end are final once a cell that starts after
# it is journalled (each waits for the counter's next move, ~15 s at idle
# power, then settles): waited for, not slept (it was a fixed 30 s).
loaded_until=$(date +%s)
last_cell() { awk -F, '/^[0-9]/ { t = $1 } END { print int(t) }' "$work/data/journal/np-node.csv" 2>/dev/null || echo 0; }
for _ in $(seq 1 120); do
  [ "$(last_cell)" -ge "$loaded_until" ] && break
  sleep 0.5
done
[ "$(last_cell)" -ge "$loaded_until" ] ||
  { echo "FAIL: no cell after the load's end journalled within 60 s"; tail "$work/ergd.log"; exit 1; }
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
kill "$ERGD_PID"
wait "$ERGD_PID" 2>/dev/null || true
[ "$(grep -c 'energy counter stood still .* no power reading' "$work/ergd.log")" = 1 ] ||
  { echo "FAIL: holding not logged exactly once"; cat "$work/ergd.log"; exit 1; }
held=$(awk '/^erg_meter_energy_held_polls_total\{source="gen"/ {print $2}' "$work/metrics.txt")
[ "${held:-0}" -gt 50 ] || { echo "FAIL: $held polls held in /metrics"; exit 1; }
[ "$(grep -c 'meter lag not estimated: .* too coarse' "$work/ergd.log")" = 1 ] ||
  { echo "FAIL: coarse meter's lag not said once"; grep -i lag "$work/ergd.log"; exit 1; }
! grep -q "lags activity by\|meter lag now" "$work/ergd.log" ||
  { echo "FAIL: a lag taken from a coarse counter"; grep -i lag "$work/ergd.log"; exit 1; }
unresolved=$(awk '/^erg_node_lag_unresolved_cells_total\{node="np-node"\}/ {print $2}' "$work/metrics.txt")
[ "${unresolved:-0}" -gt 10 ] || { echo "FAIL: $unresolved unresolved-lag cells in /metrics"; exit 1; }
PYTHONPATH=$(dirname "$0") python3 - "$work/data/journal/np-node.csv" "$work/truth.csv" <<'PY'
import csv, statistics, sys
from journal_truth import cells as journal_cells
cells, missing, zero, sum_m, sum_t, win = 0, 0, 0, 0.0, 0.0, {}
# The first cells precede the first move; the last may still wait for one.
for t0, step, w, true_w in journal_cells(sys.argv[1], sys.argv[2])[2:-1]:
    if w != w:
        missing += 1
        continue
    cells += 1
    zero += w < 1
    sum_m += w * step
    sum_t += true_w * step
    k = int(t0 // 20)
    m, t = win.get(k, (0.0, 0.0))
    win[k] = (m + w * step, t + true_w * step)
assert cells >= 15, f"only {cells} comparable cells"
total = sum_m / sum_t - 1
errs = sorted(abs(m / t - 1) for m, t in win.values() if t > 0)
med = statistics.median(errs)
print(f"{cells} cells ({missing} without meter data, {zero} at 0 W): energy {100 * total:+.2f} %, "
      f"20-s windows: median |error| {100 * med:.2f} %, max {100 * errs[-1]:.2f} %")
assert zero == 0, f"{zero} cells read 0 W: a standing counter was taken for 0 J"
assert missing <= cells // 10, f"{missing} cells finalised before the counter moved"
assert abs(total) < 0.03, f"energy off by {100 * total:+.1f} %"
assert med < 0.10, "20-s windows do not follow the simulator's energy"
# Flag 16 only on the cells finalised before the window held enough of the
# meter's moves to tell it is coarse (30 s), none after.
flags = [int(r["flags"]) for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
late = [f for f in flags[len(flags) // 2:] if f & 16]
print(f"flag 16 on {sum(1 for f in flags if f & 16)} of {len(flags)} cells, {len(late)} in the second half")
assert not late, f"cells flagged 16 (lag unsure) after the coarse meter was recognised: {flags}"
PY
echo "ok: a coarse counter without power readings held ($held polls), moves spread back"
