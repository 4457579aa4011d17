#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg pdu probe --driver modbus against the real erg-pdusim, read back with
# mbpoll: the same watts (float32 ABCD at input register 0x34, reference 53)
# and the same 32-bit joule counter (0x1000, reference 4097); a dead port
# is a device error (exit 2) naming the host. usage: modbus_probe.sh PDUSIM PROBE
set -euo pipefail
PDUSIM=$1; PROBE=$2
. "$(dirname "$0")/snmp_lib.sh"
erg_need mbpoll python3
PORT=$(free_port)
# Constant power (no noise, no load slope) so both readers see one value.
"$PDUSIM" --modbus 127.0.0.1:"$PORT" --node a --node b --idle 123.5 --slope 0 --noise 0 \
  --quantum 0 --update 0.5 --duration 60 >"$PDU_TMP/pdusim.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 50); do
  mbpoll -m tcp -a 1 -r 53 -t 3:float -B -c 1 -1 -p "$PORT" 127.0.0.1 >/dev/null 2>&1 && break
  sleep 0.1
done
sleep 1.2 # let the joule counter move
"$PROBE" --driver modbus --host 127.0.0.1:"$PORT" --profile erg-sim --unit 2 --json >"$PDU_TMP/p.json"
mbpoll -m tcp -a 2 -r 53 -t 3:float -B -c 1 -1 -p "$PORT" 127.0.0.1 >"$PDU_TMP/w.txt"
mbpoll -m tcp -a 2 -r 4097 -t 3 -c 2 -1 -p "$PORT" 127.0.0.1 >"$PDU_TMP/j.txt"
set +e
"$PROBE" --driver modbus --host 127.0.0.1:1 --profile erg-sim --timeout 0.5 2>"$PDU_TMP/dead.err"
rc=$?
set -e
[ "$rc" = 2 ] || { echo "dead port: exit $rc, want 2"; exit 1; }
grep -q "127.0.0.1" "$PDU_TMP/dead.err"
python3 - "$PDU_TMP" <<'PY'
import json, re, sys
d = sys.argv[1]
j = json.load(open(f"{d}/p.json"))
o = j["outlets"][0]
assert j["profile"] == "erg-sim" and o["index"] == 2 and o["ok"], j
w = float(re.search(r"\[53\]:\s*(\S+)", open(f"{d}/w.txt").read()).group(1))
regs = [int(x) & 0xffff for x in re.findall(r"\[409[78]\]:\s*(-?\d+)", open(f"{d}/j.txt").read())]
joules = (regs[0] << 16) | regs[1]
assert abs(o["watts"] - 123.5) < 1e-3 and abs(w - 123.5) < 1e-3, (o, w)
probe_j = o["energy_kwh"] * 3.6e6
# mbpoll read after the probe: the counter can only have grown, by at most
# 123.5 W over the few seconds between the two reads.
assert 100 < probe_j <= joules + 0.5 and joules - probe_j < 123.5 * 5, (probe_j, joules)
print(f"modbus ok: {o['watts']} W (mbpoll {w}), counter {probe_j:.0f} J (mbpoll {joules} J)")
PY
