#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The generic Modbus register spec (FC:ADDRESS:TYPE[:ORDER], scales): erg
# pdu probe reads erg-pdusim's holding-register layout (docs/pdu.md), which
# stores the same power in four encodings and the energy in two, and gets
# the same values as the SDM layout; mbpoll reads the raw registers
# independently. A wrong order must give a wrong value.
# usage: modbus_generic.sh PDUSIM PROBE
set -euo pipefail
PDUSIM=$1; PROBE=$2
. "$(dirname "$0")/snmp_lib.sh"
erg_need mbpoll python3
port=$(free_port)
"$PDUSIM" --modbus 127.0.0.1:"$port" --node n1 --idle 123.45 --slope 0 --update 60 >"$PDU_TMP/sim.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
# Up to 20 s: on a loaded machine (ctest -j) the simulator starts slowly.
for _ in $(seq 1 200); do
  mbpoll -m tcp -p "$port" -a 1 -t 3 -r 1 -c 1 -1 127.0.0.1 >/dev/null 2>&1 && break
  sleep 0.1
done
probe() { "$PROBE" --driver modbus --host 127.0.0.1:"$port" --profile generic --json "$@" |
  python3 -c 'import json,sys; o=json.load(sys.stdin)["outlets"][0]; print(o["watts"], o["energy_kwh"])'; }
mb() { mbpoll -m tcp -p "$port" -a 1 -1 "$@" 127.0.0.1 | awk -F'\t' '/^\[/ {print $2}'; }
{
  echo "t0 $(date +%s.%N)"
  echo "f32cdab $(probe --power-register 3:0x100:float32:cdab --energy-register 3:0x107:float32:dcba --energy-scale-joules 3.6e6)"
  echo "u16 $(probe --power-register 3:258:uint16 --power-scale 0.1)"
  echo "i32badc $(probe --power-register 3:0x0103:int32:BADC --power-scale 0.01)"
  echo "input $(probe --power-register 4:0x34:float32 --energy-register 4:0x1000:uint32 --energy-scale-joules 1)"
  echo "t1 $(date +%s.%N)"
  echo "wrong $(probe --power-register 3:0x100:float32:abcd)"
  # mbpoll: references are 1-based; its 32-bit types are word-swapped (cdab)
  # unless -B (abcd).
  echo "mb_f32 $(mb -t 4:float -r 257 -c 1)"
  echo "mb_u16 $(mb -t 4 -r 259 -c 1)"
  echo "mb_sdm $(mb -t 3:float -B -r 53 -c 1)"
} >"$PDU_TMP/vals"
cat "$PDU_TMP/vals"
python3 - "$PDU_TMP/vals" <<'PY'
import sys
v = {l.split()[0]: l.split()[1:] for l in open(sys.argv[1])}
f = lambda k, i=0: float(v[k][i]) if v[k][i] not in ("None", "nan") else float("nan")
W = 123.45
assert abs(f("f32cdab") - W) < 1e-3, v["f32cdab"]
assert abs(f("u16") - 123.5) < 1e-6, v["u16"]          # 0.1 W register
assert abs(f("i32badc") - W) < 1e-6, v["i32badc"]      # 0.01 W register
assert abs(f("input") - W) < 1e-3, v["input"]
assert not abs(f("wrong") - W) < 1, v["wrong"]
assert abs(f("mb_f32") - W) < 1e-3 and f("mb_u16") == 1235 and abs(f("mb_sdm") - W) < 1e-3, v
# Energy: float32 kWh (dcba) and the uint32 J counter advance together:
# apart by what W drew between the two probes (on a loaded machine the
# probes between them took 7 s once), the J counter floored.
e_kwh, e_j = f("f32cdab", 1) * 3.6e6, f("input", 1) * 3.6e6
dt = f("t1") - f("t0")
assert e_kwh > 0 and -1.5 <= e_j - e_kwh <= W * dt + 1.5, (e_kwh, e_j, dt)
print(f"ok: 4 encodings of {W} W agree; energy {e_kwh:.0f} J / {e_j:.0f} J")
PY
if "$PROBE" --driver modbus --host 127.0.0.1:"$port" --profile generic \
     --power-register 3:0x100:float64 2>"$PDU_TMP/err"; then
  echo "FAIL: bad type accepted"; exit 1
fi
grep -q "type must be" "$PDU_TMP/err" || { cat "$PDU_TMP/err"; exit 1; }
