#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Units of a daisy chain and a second cord (issue 34 item 1) read by ergd:
# a Raritan cascade (pduIds 1 and 210) and a Sentry4 with cord B
# (tests/fixtures/snmprec), channels named LEVEL:UNIT.N. Each node's cells
# carry its own unit's outlet (the units' values differ), /metrics tells the
# channels of one number apart by a unit label, the logs name the unit, and
# erg check-config takes the file.
# usage: units_ergd.sh ERGD ERG FIXTURE_DIR
set -euo pipefail
ERGD=$1; ERG=$2; FIX=$3
. "$(dirname "$0")/snmp_lib.sh"
erg_need snmpsimd python3
mkdir -p "$PDU_TMP/w"
cp "$FIX/raritan-pdu2-chain.snmprec" "$FIX/servertech-sentry4-cordb.snmprec" "$PDU_TMP/w/"
PORT=$(free_udp_port)
pdu_snmpsimd "$PDU_TMP/w" "$PORT"
ZP=$(free_port); HP=$(free_port)
erg_ergd_conf <<CONF
poll_seconds = 1
step_seconds = 1

[pdu.ch]
host = 127.0.0.1
port = $PORT
community = raritan-pdu2-chain
[pdu.st]
host = 127.0.0.1
port = $PORT
community = servertech-sentry4-cordb
[node.a]
power = ch:outlet:1.3
[node.b]
power = ch:outlet:210.3
[node.c]
power = st:outlet:1.1.4
[node.d]
power = st:outlet:1.2.4
CONF
"$ERG" check-config "$PDU_TMP/ergd.conf" >/dev/null
erg_start_ergd
erg_wait_log "$PDU_TMP/ergd.log" "source st outlet 1.2.4: energy counter" 1 15
python3 - "$PDU_TMP" "$HP" <<'PY'
import csv, os, sys, time, urllib.request
d, hp = sys.argv[1], sys.argv[2]
want = {"a": 98.7, "b": 49.3, "c": 420.0, "d": 210.0}
def measured(node):
    f = f"{d}/data/journal/{node}.csv"
    if not os.path.exists(f):
        return set()
    rows = [r for r in csv.reader(open(f)) if r and r[0].isdigit()]
    return {float(r[2]) for r in rows if r[2] != "nan"}
deadline = time.time() + 20  # cells come within a few steps (slower under ASan)
while time.time() < deadline and not all(measured(n) for n in want):
    time.sleep(0.5)
for node, w in want.items():
    got = measured(node)
    assert got == {w}, f"node {node}: measured {got}, want {w} W"
m = urllib.request.urlopen(f"http://127.0.0.1:{hp}/metrics").read().decode()
for lab in ('source="ch",level="outlet",index="3",unit="1"}',
            'source="ch",level="outlet",index="3",unit="210"}',
            'source="st",level="outlet",index="4",unit="1.2"}'):
    assert "erg_meter_bad_values_total{" + lab + " 0" in m, lab
print("ergd: each unit's outlet read, told apart in /metrics")
PY
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
[ $rc = 0 ] && ! grep -q "Sanitizer" "$PDU_TMP/ergd.log" || { echo "FAIL: ergd exit $rc"; exit 1; }
echo "ok: units read by ergd"
