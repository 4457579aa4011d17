#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Meter values outside the channel's physical range (issue 23): a Modbus
# meter (pymodbus, tests/integration/meter_range_server.py) answers -500 W,
# NaN and 4,294,967,295 W on three units and 150 W on a fourth, read once
# more by a source with max_watts = 100. ergd must give the nodes on the bad
# units no measured power (no journal row with any, nothing invented),
# count every poll (erg_meter_out_of_range_total, NaN in
# erg_meter_bad_values_total) and say each channel once in its log; the
# good unit is unaffected.
# usage: meter_range.sh ERGD
set -euo pipefail
ERGD=$1
. "$(dirname "$0")/lib.sh"
# pymodbus is a Debian package: it lives in Debian's python, not in a pyenv.
PY=/usr/bin/python3
"$PY" -c 'import pymodbus' 2>/dev/null || { echo "SKIP: python3-pymodbus not installed"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit 77; }
erg_setup meter_range
erg_ports
"$PY" "$(dirname "$0")/meter_range_server.py" "$MB" >"$work/server.log" 2>&1 &
pids+=($!)
wait_port "$MB"
gen() { printf '[meter.%s]\nhost = 127.0.0.1\nport = %s\nprofile = generic\npower_register = %s\n' "$1" "$MB" "$2"; }
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
$(gen gen 4:0x34:float32)
$(gen u32 3:0x10:uint32)
$(gen tight 4:0x34:float32)
max_watts = 100
[node.neg]
power = gen:1
[node.nan]
power = gen:2
[node.good]
power = gen:3
[node.big]
power = u32:4
[node.tight]
power = tight:3
CONF
erg_start_ergd
sleep 10
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
kill "$ERGD_PID"; wait "$ERGD_PID" || true
"$PY" - "$work" <<'PY'
import math, os, re, sys
work = sys.argv[1]
metrics = open(f"{work}/metrics.txt").read()
log = open(f"{work}/ergd.log").read()

def metric(name, source, index):
    m = re.search(rf'^{name}{{source="{source}",level="outlet",index="{index}"}} (\S+)$', metrics, re.M)
    assert m, f"no {name} for {source} {index}"
    return float(m.group(1))

for source, index in (("gen", 1), ("u32", 4), ("tight", 3)):
    n = metric("erg_meter_out_of_range_total", source, index)
    assert n >= 4, f"{source} {index}: {n} polls out of range counted"
assert metric("erg_meter_out_of_range_total", "gen", 3) == 0
assert metric("erg_meter_bad_values_total", "gen", 2) >= 4, "NaN polls not counted"
for line in ("source gen outlet 1: power -500 W is outside 0..100000 W (max_watts)",
             "source u32 outlet 4: power 4294967295 W is outside 0..100000 W (max_watts)",
             "source tight outlet 3: power 150 W is outside 0..100 W (max_watts)",
             "source gen outlet 2: power register 4:0x0034 read NaN"):
    assert log.count(line) == 1, f"logged {log.count(line)} times, not once: {line}\n{log}"

def journal(node):
    rows = []
    path = f"{work}/data/journal/{node}.csv"
    # A node without a single measured interval has no cell to journal.
    for line in open(path) if os.path.exists(path) else []:
        if line[0].isdigit():
            t, step, w, flags = line.split(",")[:4]
            rows.append((int(t), float(w), int(flags)))
    return rows

good = [r for r in journal("good") if not r[2] & 1]
assert len(good) >= 2 and all(abs(r[1] - 150) < 0.5 for r in good), journal("good")
for node in ("neg", "nan", "big", "tight"):
    rows = journal(node)
    bad = [r for r in rows if not (r[2] & 1) or not math.isnan(r[1])]
    assert not bad, f"{node}: measured power from values that are no reading: {bad}"
print(f"ok: {len(good)} cells of good at 150 W; the bad units' nodes have none, each "
      "channel counted and logged once")
PY
