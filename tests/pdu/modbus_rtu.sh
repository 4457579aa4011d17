#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Modbus RTU over a real tty pair (socat ptys): erg-pdusim serves RTU on
# one end; erg pdu probe and mbpoll -m rtu read it on the other and agree;
# a unit id that is no node stays silent (RTU: no answer); then ergd polls
# an RTU meter from its config (device, baud, parity, ...) without errors.
# usage: modbus_rtu.sh PDUSIM PROBE ERGD
set -euo pipefail
PDUSIM=$1; PROBE=$2; ERGD=$3
. "$(dirname "$0")/snmp_lib.sh"
erg_need socat mbpoll python3 curl
A=$PDU_TMP/tty-a; B=$PDU_TMP/tty-b
socat pty,raw,echo=0,link="$A" pty,raw,echo=0,link="$B" 2>"$PDU_TMP/socat.log" &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 50); do [ -e "$A" ] && [ -e "$B" ] && break; sleep 0.1; done
# --slope 0: the power does not depend on this machine's load.
"$PDUSIM" --modbus-rtu "$A" --baud 19200 --parity E --node n1 --node n2 --idle 87.5 --slope 0 \
  --update 60 >"$PDU_TMP/sim.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
sleep 0.5
mb() { mbpoll -m rtu -b 19200 -P even -o 1 -1 "$@" "$B" | awk -F'\t' '/^\[/ {print $2}'; }
w_mb=$(mb -a 2 -t 3:float -B -r 53 -c 1)
e0=$(mb -a 2 -t 3:int -B -r 4097 -c 1)
"$PROBE" --driver modbus --device "$B" --baud 19200 --parity E --profile erg-sim --unit 2 \
  --json >"$PDU_TMP/p.json"
e1=$(mb -a 2 -t 3:int -B -r 4097 -c 1)
"$PROBE" --driver modbus --device "$B" --baud 19200 --parity E --profile erg-sim --unit 2 \
  >"$PDU_TMP/p.txt"
python3 - "$PDU_TMP/p.json" "$w_mb" "$e0" "$e1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
w_mb, e0, e1 = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
o = j["outlets"][0]
assert j["device"].endswith("tty-b") and o["index"] == 2 and o["ok"], j
assert abs(w_mb - 87.5) < 1e-3 and abs(o["watts"] - w_mb) < 1e-3, (w_mb, o)
e = o["energy_kwh"] * 3.6e6
assert e0 - 0.01 <= e <= e1 + 0.01 and e1 > e0, (e0, e, e1)  # kWh in JSON: 12 digits
print(f"ok: rtu unit 2 = {o['watts']} W (mbpoll {w_mb}), counter {e0} <= {e:.0f} <= {e1} J")
PY
grep -q "^device = .*tty-b" "$PDU_TMP/p.txt" && grep -q "^parity = E" "$PDU_TMP/p.txt" &&
  grep -q "^baud = 19200" "$PDU_TMP/p.txt" || { echo "FAIL: config section"; cat "$PDU_TMP/p.txt"; exit 1; }
if "$PROBE" --driver modbus --device "$B" --baud 19200 --parity E --profile erg-sim --unit 9 \
     --timeout 0.5 >/dev/null 2>"$PDU_TMP/err"; then
  echo "FAIL: unit 9 answered"; exit 1
fi
grep -q "unit 9: read power" "$PDU_TMP/err" || { cat "$PDU_TMP/err"; exit 1; }

# ergd: an RTU meter from the config (line settings and a generic register
# spec), both units, 1 s polls.
ZP=$(free_port); HP=$(free_port)
erg_ergd_conf <<CONF
poll_seconds = 1

[meter.bus]
device = $B
baud = 19200
parity = even
data_bits = 8
stop_bits = 1
profile = generic
power_register = 3:0x0100:float32:cdab
energy_register = 4:0x1000:uint32
energy_scale_joules = 1

[node.n1]
power = bus:1
[node.n2]
power = bus:2
CONF
"$ERGD" -c "$PDU_TMP/ergd.conf" 2>"$PDU_TMP/ergd.log" &
ERGD_PID=$!
PDU_PIDS="$PDU_PIDS $ERGD_PID"
sleep 4.5
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/m"
python3 - "$PDU_TMP/m" <<'PY'
import re, sys
m = dict((k, float(v)) for k, v in re.findall(r'^(erg_source_\w+\{source="bus"\}) (\S+)$', open(sys.argv[1]).read(), re.M))
polls, errs = m['erg_source_polls_total{source="bus"}'], m['erg_source_poll_errors_total{source="bus"}']
dur = m['erg_source_poll_duration_seconds{source="bus"}']
assert polls >= 3 and errs == 0, m
assert 0 < dur < 0.5, m
print(f"ok: ergd polled the rtu meter {polls:.0f} times, no errors, last poll {dur*1000:.1f} ms")
PY
# A clean stop (and, in a sanitizer build, no leak or memory error report).
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
if [ $rc != 0 ] || grep -q "Sanitizer" "$PDU_TMP/ergd.log"; then
  echo "FAIL: ergd exit $rc"; cat "$PDU_TMP/ergd.log"; exit 1
fi
