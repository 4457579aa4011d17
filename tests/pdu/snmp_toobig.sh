#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# An SNMP agent with a small buffer (old PDU firmware) answers tooBig to a
# GET of many varbinds. erg-pdusim --snmp-max-varbinds 3 plays one with 8
# outlets: erg pdu probe (names, count, power, energy: GETs of 8-16
# varbinds) must halve its GETs until they fit and read every outlet, as
# snmpget of the same OIDs does; ergd must poll it without errors.
# usage: snmp_toobig.sh PDUSIM PROBE ERGD
set -euo pipefail
PDUSIM=$1 PROBE=$2 ERGD=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/snmp_lib.sh"
erg_need snmpget python3 curl ss
port=$(free_udp_port) mb=$(free_port) HP=$(free_port) ZP=$(free_port)
nodes=()
for i in 1 2 3 4 5 6 7 8; do nodes+=(--node "o$i"); done
"$PDUSIM" --modbus 127.0.0.1:"$mb" --snmp 127.0.0.1:"$port" --snmp-max-varbinds 3 "${nodes[@]}" \
  --idle 100 --slope 0 --noise 0 --quantum 0 --update 0.5 --duration 60 >"$PDU_TMP/sim.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 50); do
  snmpget -v2c -c public -t 0.2 -r 0 127.0.0.1:"$port" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 && break
  sleep 0.1
done
# The agent really refuses a 4-varbind GET.
o=1.3.6.1.4.1.318.1.1.26.9.4.3.1.7
if snmpget -v2c -c public -t 1 -r 0 127.0.0.1:"$port" $o.1 $o.2 $o.3 $o.4 >"$PDU_TMP/big" 2>&1; then
  echo "FAIL: the simulator answered 4 varbinds"; cat "$PDU_TMP/big"; exit 1
fi
grep -qi "toobig\|too big\|tooBig" "$PDU_TMP/big" || { cat "$PDU_TMP/big"; exit 1; }
"$PROBE" --driver snmp --host 127.0.0.1:"$port" --json >"$PDU_TMP/probe.json" 2>"$PDU_TMP/probe.err" ||
  { cat "$PDU_TMP/probe.err"; exit 1; }
snmpget -v2c -c public -On -Oqv 127.0.0.1:"$port" $o.8 >"$PDU_TMP/w8"
python3 - "$PDU_TMP" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/probe.json"))
outs = j["outlets"]
assert [o["name"] for o in outs] == [f"o{i}" for i in range(1, 9)], outs
assert all(o["ok"] and abs(o["watts"] - 100) < 1.01 for o in outs), outs
assert all(o["energy_kwh"] is not None for o in outs), outs
assert abs(float(open(f"{d}/w8").read()) - outs[7]["watts"]) < 1.01
print("probe ok: 8 outlets read from an agent that takes 3 varbinds per GET")
PY
# ergd polls it for a few seconds: no poll errors after the first round.
erg_ergd_conf <<CONF
poll_seconds = 1
[pdu.small]
host = 127.0.0.1
port = $port
community = public
[node.n8]
power = small:8
CONF
erg_start_ergd
sleep 6
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/metrics"
python3 - "$PDU_TMP/metrics" <<'PY'
import sys
v = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("erg_source_poll")}
polls = v['erg_source_polls_total{source="small"}']
errs = v['erg_source_poll_errors_total{source="small"}']
assert polls >= 4 and errs <= 1, (polls, errs)
print(f"ergd ok: {polls:.0f} polls, {errs:.0f} errors")
PY
