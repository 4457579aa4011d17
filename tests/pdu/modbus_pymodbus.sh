#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg pdu probe against a Modbus server that is not ours: pymodbus (Debian
# python3-pymodbus) serving an SDM630-, an SDM120- and a generic-shaped unit
# (tests/pdu/pymodbus_meter.py). The probe must read each unit's watts and
# energy counter as served (SDM counters are shown, not used by the grid),
# and mbpoll, reading the same registers, must agree.
# usage: modbus_pymodbus.sh PROBE
set -euo pipefail
PROBE=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/snmp_lib.sh"
erg_need mbpoll ss
# pymodbus is a Debian package: it lives in Debian's python, not in a pyenv.
PY=/usr/bin/python3
"$PY" -c 'import pymodbus.server' 2>/dev/null ||
  { echo "SKIP: python3-pymodbus not installed"; exit 77; }
port=$(free_port)
W630=1234.5 E630=5678.25 W120=230.25 E120=12.5
"$PY" "$here/pymodbus_meter.py" "$port" $W630 $E630 $W120 $E120 >"$PDU_TMP/srv.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 100); do
  mbpoll -m tcp -p "$port" -a 1 -t 3:float -B -r 53 -c 1 -1 127.0.0.1 >/dev/null 2>&1 && break
  sleep 0.1
done
probe() { "$PROBE" --driver modbus --host 127.0.0.1:"$port" --json "$@" >>"$PDU_TMP/probe.json"; }
probe --profile sdm630 --unit 1
probe --profile sdm120 --unit 2
probe --profile generic --unit 3 --power-register 3:0x10:int16 --power-scale 0.1 \
  --energy-register 3:0x20:uint32:cdab --energy-scale-joules 3600
mb() { mbpoll -m tcp -p "$port" -1 "$@" 127.0.0.1 | awk -F'\t' '/^\[/ {print $2}'; }
{
  echo "mb630w $(mb -a 1 -t 3:float -B -r 53 -c 1)"
  echo "mb630e $(mb -a 1 -t 3:float -B -r 73 -c 1)"
  echo "mb120w $(mb -a 2 -t 3:float -B -r 13 -c 1)"
  echo "mbgenw $(mb -a 3 -t 4 -r 17 -c 1)"
} >"$PDU_TMP/mb"
"$PY" - "$PDU_TMP" $W630 $E630 $W120 $E120 <<'PY'
import json, sys
d, w630, e630, w120, e120 = sys.argv[1], *map(float, sys.argv[2:])
dec, text, probes = json.JSONDecoder(), open(f"{d}/probe.json").read(), []
i = 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    o, i = dec.raw_decode(text, i)
    probes.append(o)
mb = {l.split()[0]: float(l.split()[1]) for l in open(f"{d}/mb")}
want = [("sdm630", 1, w630, e630), ("sdm120", 2, w120, e120), ("generic", 3, w120, e120)]
for p, (prof, unit, w, e) in zip(probes, want):
    o = p["outlets"][0]
    assert p["profile"] == prof and o["index"] == unit and o["ok"], p
    # generic: an int16 of 0.1 W steps
    tol = 0.051 if prof == "generic" else 1e-3
    assert abs(o["watts"] - w) < tol, (prof, o["watts"], w)
    assert o["energy_kwh"] is not None and abs(o["energy_kwh"] - e) < 1e-6, (prof, o, e)
assert len(probes) == 3, probes
assert mb["mb630w"] == w630 and mb["mb630e"] == e630 and mb["mb120w"] == w120, mb
assert mb["mbgenw"] == round(w120 * 10), mb
print(f"pymodbus ok: sdm630 {w630} W {e630} kWh, sdm120 {w120} W, generic {w120} W {e120} kWh; "
      "mbpoll agrees")
PY
