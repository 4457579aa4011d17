#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 14, item 3: a generic Modbus meter whose energy register is a
# float32 kWh at a realistic reading (erg-pdusim --energy-offset-kwh 48213:
# one float step is 2^-8 kWh = 14,062.5 J, ~47 s at 300 W). Trusted, that
# counter gives 0 W cells and single cells of thousands of W. ergd must see
# that it is too coarse for a 5 s cell, use the power register instead, say
# so once in its log and in /metrics, and `erg pdu probe` must report it.
# The cells ergd journals must then follow the simulator's own energy
# (--truth) within a few %.
# usage: coarse_register.sh PDUSIM ERGD AGENT ERG
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3 ERG=$4
. "$(dirname "$0")/../integration/lib.sh"
erg_need curl python3
erg_setup coarse
erg_ports
OFFSET=48213
# Power of the whole machine's load, refreshed every second, 0.1 W steps,
# no lag (the lag is item 2's business; here the meter's alignment must not
# blur the comparison).
erg_ergd_conf <<CONF
step_seconds = 5
poll_seconds = 0.5
lag_max_seconds = 0
[meter.gen]
driver = modbus
host = 127.0.0.1
port = $MB
profile = generic
unit_id = 1
power_register = 4:0x34:float32
energy_register = 4:0x48:float32
energy_scale_joules = 3600000
[node.coarse-node]
power = gen
CONF
erg_start_pdusim --node coarse-node --idle 120 --slope 180 --quantum 0.1 --update 1 \
  --energy-offset-kwh "$OFFSET" --truth "$work/truth.csv"
"$ERG" pdu probe --driver modbus --host "127.0.0.1:$MB" --profile generic \
  --power-register 4:0x34:float32 --energy-register 4:0x48:float32 \
  --energy-scale-joules 3600000 >"$work/probe.txt"
"$ERG" pdu probe --driver modbus --host "127.0.0.1:$MB" --profile generic \
  --power-register 4:0x34:float32 --energy-register 4:0x48:float32 \
  --energy-scale-joules 3600000 --json >"$work/probe.json"
cat "$work/probe.txt"
grep -q "TOO COARSE" "$work/probe.txt" || { echo "FAIL: probe does not call the counter coarse"; exit 1; }
python3 - "$work/probe.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["outlets"][0]
assert o["energy_counter_coarse"] is True and o["energy_from"] == "power", o
assert abs(o["energy_resolution_joules"] - 14062.5) < 1e-6, o
PY
erg_start_ergd
erg_start_agent coarse-node --interval 0.5
# Changing load: 0, 1 or 2 busy processes for 4..8 s each.
RANDOM=11
end=$((SECONDS + 70))
while [ $SECONDS -lt $end ]; do
  n=$((RANDOM % 3)) d=$((4 + RANDOM % 5))
  for _ in $(seq 1 $n); do timeout $d sha256sum /dev/zero & done
  sleep $d
done
sleep 12 # the last cells settle (settle_steps x step)
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
kill "$ERGD_PID"
wait "$ERGD_PID" 2>/dev/null || true
grep -q 'energy counter too coarse' "$work/ergd.log" ||
  { echo "FAIL: no log line about the coarse counter"; cat "$work/ergd.log"; exit 1; }
[ "$(grep -c 'energy counter too coarse' "$work/ergd.log")" = 1 ] ||
  { echo "FAIL: the coarse counter was logged more than once"; exit 1; }
grep -q '^erg_meter_energy_coarse{source="gen",level="outlet",index="1"} 1$' "$work/metrics.txt" ||
  { echo "FAIL: /metrics does not show the coarse counter"; grep erg_meter "$work/metrics.txt"; exit 1; }
fallbacks=$(awk '/^erg_meter_energy_fallback_intervals_total\{source="gen"/ {print $2}' \
  "$work/metrics.txt")
[ "${fallbacks:-0}" -gt 50 ] || { echo "FAIL: $fallbacks fallback intervals counted"; exit 1; }
PYTHONPATH=$(dirname "$0") python3 - "$work/data/journal/coarse-node.csv" "$work/truth.csv" <<'PY'
import statistics, sys
from journal_truth import cells as journal_cells
errs, zero, cells, sum_m, sum_t = [], 0, 0, 0.0, 0.0
for t0, step, w, true_w in journal_cells(sys.argv[1], sys.argv[2]):
    if w != w:
        continue
    cells += 1
    zero += w < 1
    sum_m += w * step
    sum_t += true_w * step
    errs.append(abs(w - true_w) / true_w)
assert cells >= 8, f"only {cells} comparable cells"
errs.sort()
med, p90 = statistics.median(errs), errs[int(0.9 * (len(errs) - 1))]
total = sum_m / sum_t - 1
print(f"{cells} cells: median |error| {100 * med:.2f} %, 90th percentile {100 * p90:.2f} %, "
      f"max {100 * errs[-1]:.2f} %, energy {100 * total:+.2f} %, {zero} cells at 0 W")
assert zero == 0, f"{zero} cells read 0 W: the coarse counter was trusted"
assert med < 0.02 and p90 < 0.05, "cells do not follow the simulator's power"
assert abs(total) < 0.02, f"energy off by {100 * total:+.1f} %"
PY
echo "ok: coarse float32 kWh counter ($OFFSET kWh) replaced by the power register" \
  "($fallbacks intervals)"
