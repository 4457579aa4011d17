#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg pdu probe --driver ipmi against a simulated BMC (pdusim/dcmi_bmc.py,
# pyghmi's IPMI 2.0 server, cipher suite 3): the current power it serves
# (not its different min/max/average), agreed by freeipmi's own ipmi-dcmi;
# --json rows with chassis "ipmi", watts and energy_joules null; the config
# it prints accepted by erg check-config; an inactive-but-non-zero reading
# taken with the note; 0 W and "invalid command" refused with the reason
# (exit 0: the BMC answered); a slow BMC's request time measured and a
# timeout suggested for it; a wrong password, a dead BMC (exit 2) and a
# password file others can read (refused) each said clearly.
# usage: ipmi_probe.sh PROBE ERG
set -euo pipefail
PROBE=$1; ERG=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/snmp_lib.sh"
. "$here/ipmi_lib.sh"
erg_need ipmi-dcmi
ipmi_bmc bmc --watts 321
printf 'min=100\nmax=900\navg=555\nperiod_ms=604800000\n' >"$BMC_CTL"
PW=$(ipmi_pwfile good password)
probe() { "$PROBE" --driver ipmi --host 127.0.0.1:"$BMC_PORT" --user admin --password-file "$PW" "$@"; }

# The reading, text and JSON, and what freeipmi's own tool reads.
probe >"$PDU_TMP/text"
probe --json >"$PDU_TMP/ok.json"
ipmi-dcmi -h 127.0.0.1:"$BMC_PORT" -u admin -p password -D LAN_2_0 -I 3 \
  --get-system-power-statistics >"$PDU_TMP/ipmi-dcmi.txt"
grep -q "current .* 321 W .*erg takes this" "$PDU_TMP/text" || { cat "$PDU_TMP/text"; exit 1; }
grep -q "^Current Power *: 321 Watts" "$PDU_TMP/ipmi-dcmi.txt" || { cat "$PDU_TMP/ipmi-dcmi.txt"; exit 1; }

# The config it prints, with names filled in, passes check-config.
sed -n '/^\[meter.NAME\]/,$p' "$PDU_TMP/text" | sed 's/NAME/bmc1/; s/NODE/n1/' >"$PDU_TMP/c.conf"
"$ERG" check-config "$PDU_TMP/c.conf" || { cat "$PDU_TMP/c.conf"; exit 1; }
grep -q "^password_file = $PW$" "$PDU_TMP/c.conf"
# ... and refuses it once the password file is readable by everyone.
chmod 644 "$PW"
if "$ERG" check-config "$PDU_TMP/c.conf" 2>"$PDU_TMP/cc.err"; then
  echo "FAIL: check-config took a world-readable password file"; exit 1
fi
grep -q "lets every user read it" "$PDU_TMP/cc.err" || { cat "$PDU_TMP/cc.err"; exit 1; }
# What check-config refuses before asking any BMC.
refuse() { # KEY=VALUE to change, the reason expected
  sed "s|^${1%%=*} = .*|${1%%=*} = ${1#*=}|" "$PDU_TMP/c.conf" >"$PDU_TMP/r.conf"
  if "$ERG" check-config "$PDU_TMP/r.conf" 2>"$PDU_TMP/r.err"; then
    echo "FAIL: check-config took $1"; exit 1
  fi
  grep -q "$2" "$PDU_TMP/r.err" || { echo "$1:"; cat "$PDU_TMP/r.err"; exit 1; }
}
refuse "cipher_suite=5" "cipher_suite 5: want one with authentication"
refuse "user=" "needs user"
refuse "password_file=$PDU_TMP/none" "password_file $PDU_TMP/none: No such file"
set +e
probe >/dev/null 2>"$PDU_TMP/ww.err"; rc_ww=$?
set -e
chmod 600 "$PW"
[ "$rc_ww" = 2 ] && grep -q "lets every user read it" "$PDU_TMP/ww.err"

# OpenBMC's inactive-but-non-zero, then 0 W, then "invalid command".
printf 'active=0\nwatts=287\n' >"$BMC_CTL"
probe --json >"$PDU_TMP/inactive.json"
printf 'watts=0\n' >"$BMC_CTL"
probe --json >"$PDU_TMP/zero.json"
printf 'cc=0xc1\n' >"$BMC_CTL"
probe --json >"$PDU_TMP/c1.json"
probe >"$PDU_TMP/c1.text"
grep -q "^REFUSED .*0xC1 (invalid command): this BMC has no DCMI power reading" "$PDU_TMP/c1.text"
# A slow BMC: the request time is measured, the timeout suggested fits it.
printf 'delay=1.3\n' >"$BMC_CTL"
probe --json --timeout 3 >"$PDU_TMP/slow.json"
rm -f "$BMC_CTL"

# A wrong password and a dead BMC: exit 2, said.
BAD=$(ipmi_pwfile bad wrong)
set +e
"$PROBE" --driver ipmi --host 127.0.0.1:"$BMC_PORT" --user admin --password-file "$BAD" \
  2>"$PDU_TMP/bad.err"; rc_bad=$?
DEAD=$(free_udp_port)
"$PROBE" --driver ipmi --host 127.0.0.1:"$DEAD" --user admin --password-file "$PW" \
  --timeout 0.3 --retries 1 2>"$PDU_TMP/dead.err"; rc_dead=$?
set -e
[ "$rc_bad" = 2 ] && grep -q "password invalid: login refused" "$PDU_TMP/bad.err" ||
  { echo "wrong password: exit $rc_bad"; cat "$PDU_TMP/bad.err"; exit 1; }
[ "$rc_dead" = 2 ] && grep -q "127.0.0.1:$DEAD.*timeout" "$PDU_TMP/dead.err" ||
  { echo "dead BMC: exit $rc_dead"; cat "$PDU_TMP/dead.err"; exit 1; }

"$PY" - "$PDU_TMP" <<'PY'
import json, sys
d = sys.argv[1]
def row(name):
    o = json.load(open(f"{d}/{name}.json"))
    assert o["driver"] == "ipmi" and len(o["rows"]) == 1, o
    r = o["rows"][0]
    assert r["chassis"] == "ipmi" and "energy_joules" in r and r["energy_joules"] is None, r
    return o, r
o, r = row("ok")
assert r["watts"] == 321 and r["used"] and r["verdict"] == "ok", r
# The BMC's window statistics are shown, never taken.
assert (r["min_watts"], r["max_watts"], r["average_watts"]) == (100, 900, 555), r
assert r["period_ms"] == 604800000 and r["measurement_active"], r
assert abs(r["bmc_clock_offset_seconds"]) < 5, r
assert 0 <= o["login_seconds"] < 2 and 0 <= o["request_seconds"] < 1, o
_, r = row("inactive")
assert r["watts"] == 287 and r["used"] and r["verdict"] == "inactive_taken", r
assert not r["measurement_active"] and "inactive" in r["why"], r
_, r = row("zero")
assert r["watts"] is None and not r["used"] and r["verdict"] == "zero", r
assert r["current_watts"] == 0 and "0 W" in r["why"], r
_, r = row("c1")
assert r["watts"] is None and r["verdict"] == "unsupported" and r["completion_code"] == 0xC1, r
o, r = row("slow")
assert r["watts"] is not None and 1.3 <= o["request_seconds"] < 2.5, o
assert o["suggested_timeout_seconds"] >= 3 * o["request_seconds"] - 1, o
print(f"ok: 321 W (ipmi-dcmi agrees), min/max/avg shown not taken; inactive 287 W taken; "
      f"0 W and 0xC1 refused; slow BMC {o['request_seconds']:.2f} s -> timeout "
      f"{o['suggested_timeout_seconds']:g} s; wrong password and dead BMC exit 2")
PY
