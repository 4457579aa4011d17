#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 25: what `erg pdu probe` prints to start a config from is a config
# `erg check-config` takes — the source section and a [node.NODE] whose
# power names a channel the device meters (it said "add channels = ...",
# a key that does not exist) — for erg-pdusim's SNMP agent, a recorded
# Raritan walk and its Modbus meter; and each row says its power
# resolution ("10 W steps": the APC device total beside 1-W outlets).
set -euo pipefail
ERG=$1 PDUSIM=$2
. "$(dirname "$0")/lib.sh"
erg_need python3
RARITAN=$(cd "$(dirname "$0")/../fixtures/snmprec" && pwd)/raritan-pdu2.snmprec
# A real Sentry3 (watts estimated from A x V: the hint has power_factor),
# where the shared recordings are (tests/pdu/CMakeLists.txt).
SENTRY3=$(cd "$(dirname "$0")/../.." && pwd)/../shared/fixtures/pdu-recordings/sentry3.snmprec
erg_setup probe_hint
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
sim() { # TAG ARGS...: erg-pdusim with an SNMP agent on $SP, Modbus on $MB
  local tag=$1
  shift
  MB=$(free_port) SP=$(free_port)
  "$PDUSIM" --modbus 127.0.0.1:$MB --snmp 127.0.0.1:$SP "$@" >"sim-$tag.log" 2>&1 &
  pids+=($!)
  wait_port "$MB"
  for _ in $(seq 1 50); do grep -q "SNMP agent" "sim-$tag.log" && return 0; sleep 0.1; done
  fail "erg-pdusim $tag: no SNMP agent"
}
# The probe's config part, from the source section on, as a config file.
check_hint() { # TAG POWER: probe output in probe-TAG.txt, POWER its node's power line
  sed -n '/^\[\(pdu\|meter\)\.NAME\]/,$p' "probe-$1.txt" >"$1.conf"
  grep -q '^\[node\.NODE\]$' "$1.conf" || { cat "probe-$1.txt"; fail "$1: no [node.NODE] hint"; }
  "$ERG" check-config "$1.conf" || { cat "$1.conf"; fail "$1: check-config refuses the hint"; }
  grep -qx "power = $2" "$1.conf" || { cat "$1.conf"; fail "$1: hint is not power = $2"; }
}
sim apc --node a --node b
"$ERG" pdu probe --driver snmp --host 127.0.0.1:$SP >probe-apc.txt || fail "probe apc"
check_hint apc NAME:outlet:1
grep -q '^total .* W (10 W steps)$' probe-apc.txt || { cat probe-apc.txt; fail "apc: total step"; }
grep -q '^device 1 .* measured (10 W steps)$' probe-apc.txt || fail "apc: device row step"
[ "$(grep -c '^ *outlet [12] .* measured (1 W steps)$' probe-apc.txt)" = 2 ] ||
  { cat probe-apc.txt; fail "apc: outlet row steps"; }
"$ERG" pdu probe --driver snmp --host 127.0.0.1:$SP --json >probe-apc.json
python3 - probe-apc.json <<'PY' || fail "apc: JSON steps"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["total_step_watts"] == 10, j["total_step_watts"]
steps = {(r["level"], r["index"]): r["power_step_watts"] for r in j["rows"]}
assert steps == {("device", 1): 10, ("outlet", 1): 1, ("outlet", 2): 1}, steps
PY
"$ERG" pdu probe --driver modbus --host 127.0.0.1:$MB --profile erg-sim --unit 2 \
  >probe-meter.txt || fail "probe modbus"
check_hint meter NAME:2
kill "${pids[@]}"; pids=()
# A recorded Raritan PX (decimal digits: outlets in 0.1 W steps, inlet in 1 W).
sim raritan --snmp-walk "$RARITAN"
"$ERG" pdu probe --driver snmp --host 127.0.0.1:$SP >probe-raritan.txt || fail "probe raritan"
check_hint raritan NAME:outlet:1
grep -q '^ *outlet 1 .* measured (0.1 W steps)$' probe-raritan.txt &&
  grep -q '^ inlet 1 .* measured (1 W steps)$' probe-raritan.txt ||
  { cat probe-raritan.txt; fail "raritan: row steps"; }
if [ -f "$SENTRY3" ]; then
  kill "${pids[@]}"; pids=()
  sim sentry3 --snmp-walk "$SENTRY3"
  "$ERG" pdu probe --driver snmp --host 127.0.0.1:$SP >probe-sentry3.txt || fail "probe sentry3"
  grep -q '^power_factor = ' probe-sentry3.txt || fail "sentry3: no power_factor in the hint"
  check_hint sentry3 NAME:inlet:1.1 # tower A of the recorded chain of two (issue 34)
fi
echo "ok: the probe's config hints pass check-config (SNMP, recorded walk, Modbus);" \
  "resolution per row (APC device 10 W, outlets 1 W; Raritan outlets 0.1 W)"
