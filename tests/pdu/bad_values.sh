#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A PDU that answers values which are no readings (tests/fixtures/snmprec-bad:
# text "n/a" and NULL where the MIB has a Gauge, a negative power, text for
# an energy counter) next to a good outlet. The probe reads the bad ones as
# missing and says what the device sent; ergd polls them, invents nothing
# (no power for those outlets), says each once in its log and counts every
# poll in erg_meter_bad_values_total; the good outlet is unaffected. A
# node on a level the detected profile lacks is said once too. A second PDU
# (physics.snmprec) sends its phase volts 1000x its MIB's and an outlet
# above the whole PDU: the probe and ergd read the volts rescaled and say
# so once, and refuse the outlet (physics across levels), counted.
# usage: bad_values.sh PROBE ERGD FIXTURE_DIR
set -euo pipefail
PROBE=$1; ERGD=$2; FIX=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/snmp_lib.sh"
erg_need snmpsimd snmpget python3 curl ss
PORT=$(free_udp_port)
pdu_snmpsimd "$FIX" "$PORT"
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community bad-values --json >"$PDU_TMP/p.json"
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community bad-values >"$PDU_TMP/p.txt"
python3 - "$PDU_TMP/p.json" <<'PY'
import json, sys
rows = {r["index"]: r for r in json.load(open(sys.argv[1]))["rows"] if r["level"] == "outlet"}
want = {1: "text 'n/a' instead of a number", 2: "NULL instead of a number", 3: "negative",
        5: "text '12<script>' instead of a number",  # a numeric prefix is no number
        6: "4294967295 W is impossible"}  # a Gauge32's all-ones: no power
for i, why in want.items():
    r = rows[i]
    assert r["watts"] is None, f"outlet {i}: {r['watts']} W from a bad value"
    assert r["problem"] and why in r["problem"], f"outlet {i}: problem {r['problem']!r}"
assert rows[2]["energy_kwh"] is None, rows[2]  # "abc" is no counter either
assert rows[4]["watts"] == 150 and rows[4]["problem"] is None, rows[4]
print("probe: bad values read as missing, each with its reason")
PY
grep -q "outlet 1: power: the device sent text 'n/a' instead of a number" "$PDU_TMP/p.txt"
# no impossible value printed as measured, and none suggested
if grep -E "^ *outlet [56] .*measured" "$PDU_TMP/p.txt"; then echo "FAIL: bad outlet measured"; exit 1; fi
grep -q "^power = NAME:outlet:4$" "$PDU_TMP/p.txt" || { echo "FAIL: suggested"; grep "^power" "$PDU_TMP/p.txt"; exit 1; }
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community physics --json >"$PDU_TMP/q.json"
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community physics >"$PDU_TMP/q.txt"
python3 - "$PDU_TMP/q.json" <<'PY'
import json, sys
rows = {(r["level"], r["index"]): r for r in json.load(open(sys.argv[1]))["rows"]}
o7, o4, ph = rows[("outlet", 7)], rows[("outlet", 4)], rows[("phase", 1)]
assert o7["watts"] is None and o7["power_from"] is None, o7
assert "impossible: 9000 W, over 3x the devices' 300 W" in o7["problem"], o7["problem"]
assert o4["watts"] == 150 and "impossible:" not in (o4["problem"] or ""), o4  # its borrowed volts rescaled
assert ph["values"]["voltage"] == 230 and "read as 230 V" in ph["problem"], ph
assert rows[("device", 1)]["watts"] == 300, rows[("device", 1)]
print("probe: volts 1000x read rescaled and said; an outlet above the whole PDU refused")
PY
if grep -E "^ *outlet 7 .*measured" "$PDU_TMP/q.txt"; then echo "FAIL: outlet 7 measured"; exit 1; fi
grep -q "^outlet 7: power: impossible: 9000 W" "$PDU_TMP/q.txt" || { echo "FAIL: no reason"; cat "$PDU_TMP/q.txt"; exit 1; }
ZP=$(free_port); HP=$(free_port)
erg_ergd_conf <<CONF
poll_seconds = 1
step_seconds = 1

[pdu.bad]
host = 127.0.0.1
port = $PORT
community = bad-values

[node.t]
power = bad:1
[node.n]
power = bad:outlet:2
[node.m]
power = bad:3
[node.g]
power = bad:4
[node.s]
power = bad:5
[node.o]
power = bad:6
[node.i]
power = bad:inlet:1 - bad:1 - bad:2 - bad:3 - bad:4 - bad:5 - bad:6

[pdu.r]
host = 127.0.0.1
port = $PORT
community = physics
[node.p]
power = r:phase:1
[node.r4]
power = r:4
[node.r7]
power = r:7
[node.rd]
power = r:device - r:4 - r:7 - r:phase:1
CONF
erg_start_ergd
sleep 5
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/m"
python3 - "$PDU_TMP/m" <<'PY'
import re, sys
bad = {}
for l in open(sys.argv[1]):
    r = re.match(r'erg_meter_bad_values_total\{source="bad",level="outlet",index="(\d)"\} (\d+)', l)
    if r:
        bad[int(r.group(1))] = int(r.group(2))
for i in (1, 2, 3, 5, 6):
    assert bad.get(i, 0) >= 3, f"outlet {i}: {bad.get(i)} bad polls counted in ~5 s"
assert bad.get(4) == 0, f"good outlet counted bad: {bad.get(4)}"
phys = {}
for l in open(sys.argv[1]):
    r = re.match(r'erg_meter_bad_values_total\{source="r",level="outlet",index="(\d)"\} (\d+)', l)
    if r:
        phys[int(r.group(1))] = int(r.group(2))
assert phys.get(7, 0) >= 3 and phys.get(4) == 0, f"source r: {phys}"
print("metrics: bad polls counted per outlet:", bad)
PY
# Power no reading, counter standing still: the nodes' cells come anyway,
# their measured power missing (not held back until the counter moves, not 0 W).
for node in t s o; do
  f="$PDU_TMP/data/journal/$node.csv"
  [ -s "$f" ] || { echo "FAIL: node $node has no journal after 5 s"; ls -R "$PDU_TMP/data"; exit 1; }
  grep -q "^[0-9]*,1,nan," "$f" || { echo "FAIL: node $node: no cell with missing power"; cat "$f"; exit 1; }
  if grep -Eq "^[0-9]*,1,[0-9]" "$f"; then echo "FAIL: node $node: a measured power"; cat "$f"; exit 1; fi
done
echo "cells of nodes on bad outlets come, power missing"
for what in "outlet 1: power: the device sent text 'n/a'" "outlet 2: power: the device sent NULL" \
            "outlet 3: power: the device sent -500, negative" \
            "outlet 5: power: the device sent text '12<script>' instead of a number" \
            "outlet 6: power: 4294967295 W is impossible"; do
  n=$(grep -c "source bad $what" "$PDU_TMP/ergd.log" || true)
  [ "$n" = 1 ] || { echo "FAIL: '$what' logged $n times, want once"; cat "$PDU_TMP/ergd.log"; exit 1; }
done
n=$(grep -c "source bad inlet 1: profile apc-rpdu2 has no inlet level" \
  "$PDU_TMP/ergd.log" || true)
[ "$n" = 1 ] || { echo "FAIL: a level the profile lacks said $n times, want once"; exit 1; }
# The profile taken, a value read at another scale than its MIB's (the
# firmware's volts 1000x) and an outlet impossible beside its PDU: each
# said once.
for what in "source r: profile apc-rpdu2: sysObjectID" \
            "source r: phase 1: voltage: 230000 V is impossible (0 or 80-480 V); read as 230 V" \
            "source r outlet 7: power: impossible: 9000 W, over 3x the devices' 300 W above it"; do
  n=$(grep -c "$what" "$PDU_TMP/ergd.log" || true)
  [ "$n" = 1 ] || { echo "FAIL: '$what' logged $n times, want once"; cat "$PDU_TMP/ergd.log"; exit 1; }
done
grep "source bad outlet 4" "$PDU_TMP/ergd.log" | grep -v "energy counter too coarse" && { echo "FAIL: good outlet logged"; exit 1; }
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
if [ $rc != 0 ] || grep -q "Sanitizer" "$PDU_TMP/ergd.log"; then
  echo "FAIL: ergd exit $rc"; cat "$PDU_TMP/ergd.log"; exit 1
fi
echo "ok: bad values logged once each, nothing invented"
