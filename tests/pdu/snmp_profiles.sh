#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every vendor profile against snmpsimd serving its fixture: the profile is
# picked by what the agent answers (sysObjectID suggests, tables decide), and vendor, outlet count, names, watts and energy
# equal what the fixture holds; one value per fixture is cross-checked with
# the real snmpget. usage: snmp_profiles.sh PROBE FIXTURE_DIR
set -euo pipefail
PROBE=$1; FIX=$2
. "$(dirname "$0")/snmp_lib.sh"
erg_need snmpsimd snmpget python3
PORT=$(free_udp_port)
pdu_snmpsimd "$FIX" "$PORT"
for f in "$FIX"/*.snmprec; do
  c=$(basename "$f" .snmprec)
  [ "$c" = generic-acme ] && continue
  "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community "$c" --json >"$PDU_TMP/$c.json"
done
# Unknown sysObjectID and no known table: a clear refusal (exit 2), then
# the generic profile.
set +e
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community generic-acme 2>"$PDU_TMP/generic.err"
rc=$?
set -e
[ "$rc" = 2 ] || { echo "unknown sysObjectID: exit $rc, want 2"; exit 1; }
grep -q "no known PDU table answers" "$PDU_TMP/generic.err"
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community generic-acme --profile generic \
  --oid-power '1.3.6.1.4.1.99999.2.1.%d' --oid-energy '1.3.6.1.4.1.99999.2.2.%d' \
  --energy-scale-joules 1 --json >"$PDU_TMP/generic-acme.json"
# generic with a count object (it says 2, though a third row exists: the
# count wins over row counting) and a whole-PDU power object.
"$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community generic-acme --profile generic \
  --oid-power '1.3.6.1.4.1.99999.2.1.%d' --oid-count 1.3.6.1.4.1.99999.3.0 \
  --oid-total-power 1.3.6.1.4.1.99999.4.0 --json >"$PDU_TMP/generic-count.json"
python3 - "$PDU_TMP/generic-count.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert [o["watts"] for o in j["outlets"]] == [40, 50] and j["total_watts"] == 150, j
print("generic count and total ok")
PY
if "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community generic-acme --profile generic \
     --oid-power '1.3.6.1.4.1.99999.2.1.%d' --oid-count '1.3.6.1.4.1.99999.3.%d' 2>"$PDU_TMP/err"; then
  echo "FAIL: a count OID with %d was accepted"; exit 1
fi
grep -q "bad scalar OID" "$PDU_TMP/err" || { cat "$PDU_TMP/err"; exit 1; }
# Liebert: every Liebert card (UPS, cooling, PDU) reports 476.1.42, so the
# sysObjectID only suggests; the PDU tables decide.
grep -q "suggests liebert-mph2 and its tables answer" "$PDU_TMP/liebert-mph2.json" ||
  { echo "liebert: not detected by its tables"; cat "$PDU_TMP/liebert-mph2.json"; exit 1; }
# Cross-check: one raw value per fixture straight from the agent.
sg() { snmpget -v2c -c "$1" -On -Oqv 127.0.0.1:"$PORT" "$2"; }
{
  echo "apc-rpdu2 $(sg apc-rpdu2 1.3.6.1.4.1.318.1.1.26.9.4.3.1.11.5)"
  echo "raritan-pdu2 $(sg raritan-pdu2 1.3.6.1.4.1.13742.6.5.4.3.1.4.1.1.5)"
  echo "servertech-sentry4 $(sg servertech-sentry4 1.3.6.1.4.1.1718.4.1.8.3.1.14.1.1.4)"
  echo "eaton-epdu $(sg eaton-epdu 1.3.6.1.4.1.534.6.6.7.6.5.1.4.0.1)"
  echo "geist-v5 $(sg geist-v5 1.3.6.1.4.1.21239.5.2.3.6.1.12.1)"
  echo "cyberpower-epdu2 $(sg cyberpower-epdu2 1.3.6.1.4.1.3808.1.1.6.6.2.4.1.7.2)"
  echo "liebert-mph2 $(sg liebert-mph2 1.3.6.1.4.1.476.1.42.3.8.50.20.1.85.1.1.2)"
} >"$PDU_TMP/snmpget.txt"
python3 "$(dirname "$0")/check_profiles.py" "$PDU_TMP"
