#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The simulator's SNMP agent: erg pdu probe picks the rPDU2 profile from its
# sysObjectID and reads every simulated node as an outlet; snmpwalk (GETNEXT)
# and snmpget v1 agree. usage: snmp_sim.sh HARNESS PROBE
set -euo pipefail
HARNESS=$1; PROBE=$2
. "$(dirname "$0")/snmp_lib.sh"
erg_need snmpget snmpwalk python3
PORT=$(free_udp_port)
"$HARNESS" "$PORT" 60 alpha beta gamma delta &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 50); do
  snmpget -v2c -c public -t 0.2 -r 0 127.0.0.1:"$PORT" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 && break
  sleep 0.1
done
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --json >"$PDU_TMP/sim.json"
snmpwalk -v2c -c public -On -Oq 127.0.0.1:"$PORT" 1.3.6.1.4.1.318.1.1.26.9.4.3.1.3 >"$PDU_TMP/names"
snmpget -v1 -c public -On -Oqv 127.0.0.1:"$PORT" 1.3.6.1.4.1.318.1.1.26.9.4.3.1.11.4 >"$PDU_TMP/e4"
python3 - "$PDU_TMP" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/sim.json"))
assert j["profile"] == "apc-rpdu2" and "sysObjectID" in j["profile_reason"], j
assert "SIMULATED" in j["sysdescr"], j["sysdescr"]
names = [o["name"] for o in j["outlets"]]
assert names == ["alpha", "beta", "gamma", "delta"], names
walk = [l.split(" ", 1)[1].strip('"') for l in open(f"{d}/names").read().split("\n") if l]
assert walk == names, walk
for o in j["outlets"]:
    assert o["ok"] and o["watts"] > 0, o
# The harness preloads node N with N kWh; the counter has 0.1 kWh steps.
for i, o in enumerate(j["outlets"]):
    assert abs(o["energy_kwh"] - (i + 1)) < 0.11, o
e4 = int(open(f"{d}/e4").read())
assert abs(e4 / 10 - j["outlets"][3]["energy_kwh"]) < 0.11, e4
print("sim snmp ok:", names, [o["watts"] for o in j["outlets"]])
PY
