#!/usr/bin/env bash
# Probes every recorded walk in DIR (snmpsimd community = file name): each
# must be identified by sysObjectID and give at least one outlet with a
# finite reading. Skips (77) when DIR does not exist in this checkout.
# usage: shared_fixtures.sh PROBE DIR
set -euo pipefail
PROBE=$1; DIR=$2
[ -d "$DIR" ] && ls "$DIR"/*.snmprec >/dev/null 2>&1 || { echo "SKIP: no $DIR"; exit 77; }
. "$(dirname "$0")/snmp_lib.sh"
pdu_need snmpsimd snmpget python3
PORT=$(pdu_free_port)
pdu_snmpsimd "$DIR" "$PORT"
fail=0
for f in "$DIR"/*.snmprec; do
  c=$(basename "$f" .snmprec)
  if "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community "$c" --json >"$PDU_TMP/$c.json" &&
     python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
assert "sysObjectID" in j["profile_reason"]
assert any(o["ok"] for o in j["outlets"])' "$PDU_TMP/$c.json"; then
    echo "$c: ok ($(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["profile"], len(j["outlets"]), "outlets")' "$PDU_TMP/$c.json"))"
  else
    echo "$c: FAILED"; fail=1
  fi
done
exit $fail
