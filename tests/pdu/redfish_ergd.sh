#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Redfish end to end (issue 33): erg-pdusim serves real servers' recordings
# as SIMULATED BMCs; erg pdu probe finds each node's reading and writes a
# config that erg check-config takes; ergd polls three BMCs at once:
#   fast  EX425 blade Node0 (sensors, energy counter), sessions that expire
#         every 7th GET (ergd must log in again), 0.02 s answers;
#   slow  DL325 (PowerControl), sessions, every answer 2 s late: must not
#         delay fast; read ahead (several requests in flight, each
#         connection its own session: one answer a second);
#   busy  DL385 (PowerControl), every 3rd request 503: backed off, said once;
#   timed a Sensor whose ReadingTime is its sample's on a clock an hour
#         behind ours: its readings placed by it (fast's recorded time
#         stands still: not).
# At the end ergd logs out (DELETE of its session). Also: a world-readable
# password file is refused; the CMM enclosure's config (a [group]) and the
# DGX without a node total (refused, naming parts) as the probe says.
# usage: redfish_ergd.sh PDUSIM ERGD ERG RECORDINGS
set -euo pipefail
PDUSIM=$1; ERGD=$2; ERG=$3; REC=$4
[ -d "$REC/cray-EX425" ] || { echo "SKIP: no $REC"; exit 77; }
. "$(dirname "$0")/snmp_lib.sh"
erg_need python3 curl
FP=$(free_port); SP=$(free_port); BP=$(free_port); CP=$(free_port); VP=$(free_port)
ZP=$(free_port); HP=$(free_port); TP=$(free_port)
sim() { "$PDUSIM" "$@" --update 0.2 >>"$PDU_TMP/sim.log" 2>&1 & PDU_PIDS="$PDU_PIDS $!"; }
sim --redfish "$REC/cray-EX425" --redfish-http 127.0.0.1:"$FP" --node n1 \
  --redfish-channel /redfish/v1/Chassis/Node0=n1 --redfish-user admin:s3cret \
  --redfish-401-every 7 --redfish-delay 0.02
sim --redfish "$REC/cray-DL325" --redfish-http 127.0.0.1:"$SP" --node n2 \
  --redfish-channel /redfish/v1/Chassis/1=n2 --redfish-delay 2 --redfish-user admin:s3cret
sim --redfish "$REC/nvidia-hpe" --redfish-http 127.0.0.1:"$BP" --node n3 \
  --redfish-channel /redfish/v1/Chassis/1=n3 --redfish-503-every 3
sim --redfish "$REC/cray-CMM" --redfish-http 127.0.0.1:"$CP"
sim --redfish "$REC/nvidia-viking" --redfish-http 127.0.0.1:"$VP"
python3 "$(dirname "$0")/../accuracy/bmc_tree.py" "$PDU_TMP/timed" n5:sensor
sim --redfish "$PDU_TMP/timed" --redfish-http 127.0.0.1:"$TP" --node n5 \
  --redfish-channel /redfish/v1/Chassis/n5=n5,quantum=1,refresh=1,delay=0:0.3,clock=-3600.4
for p in $FP $SP $BP $CP $VP $TP; do
  for _ in $(seq 1 50); do curl -sf -o /dev/null "http://127.0.0.1:$p/erg-sim/stats" && break; sleep 0.1; done
done
printf 's3cret\n' >"$PDU_TMP/pw"
chmod 644 "$PDU_TMP/pw"
rc=0
"$ERG" pdu probe --driver redfish --host "http://127.0.0.1:$FP" --user admin \
  --password-file "$PDU_TMP/pw" >"$PDU_TMP/p0" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "readable by everyone" "$PDU_TMP/p0" ||
  { echo "FAIL: world-readable password file taken (rc $rc)"; cat "$PDU_TMP/p0"; exit 1; }
chmod 600 "$PDU_TMP/pw"
printf 'wrong\n' >"$PDU_TMP/badpw"
chmod 600 "$PDU_TMP/badpw"
rc=0
"$ERG" pdu probe --driver redfish --host "http://127.0.0.1:$FP" --user admin \
  --password-file "$PDU_TMP/badpw" >"$PDU_TMP/p1" 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "wrong credentials" "$PDU_TMP/p1" ||
  { echo "FAIL: wrong password: exit $rc"; cat "$PDU_TMP/p1"; exit 1; }
"$ERG" pdu probe --driver redfish --host "http://127.0.0.1:$FP" --user admin \
  --password-file "$PDU_TMP/pw" --chassis /redfish/v1/Chassis/Node0 --name fast --timeout 5 \
  --json >"$PDU_TMP/fast.json"
"$ERG" pdu probe --driver redfish --host "http://127.0.0.1:$CP" --name cmm --json \
  >"$PDU_TMP/cmm.json" || true
rc=0
"$ERG" pdu probe --driver redfish --host "http://127.0.0.1:$VP" --json >"$PDU_TMP/viking.json" || rc=$?
[ $rc = 2 ] || { echo "FAIL: DGX without a node total: exit $rc, want 2"; exit 1; }
python3 - "$PDU_TMP" <<'PY'
import json, sys
d = sys.argv[1]
f = json.load(open(f"{d}/fast.json"))
assert f["auth"] == "session" and f["warning"], f
c = f["chosen"]
assert c["chassis"] == "/redfish/v1/Chassis/Node0", c
assert 0 < c["watts"] < 2000 and c["energy_joules"] is not None, c
# The sensors' own ReadingTime (the recording's, 2022-04-14): the BMC's clock.
assert c["reading_time"] and 1649900000 < c["reading_time"] < 1650000000, c
assert c["bmc_clock_offset_seconds"] < -1e7, c
used = [r for r in f["rows"] if r["used"]]
assert {r["uri"].rsplit("/", 1)[1] for r in used} == {
    "ChassisVoltageRegulator0InputPower", "ChassisVoltageRegulator0InputEnergy"}, used
for r in f["rows"]:
    assert set(r) >= {"chassis", "watts", "energy_joules"}, r
    assert (r["watts"] is None) or (r["energy_joules"] is None), r
assert any(not r["used"] and "part" in r["refused"] for r in f["rows"]), "no refused part"
assert f["requests"] and all(q["seconds"] >= 0.02 for q in f["requests"]), f["requests"][:3]
open(f"{d}/fast.conf", "w").write(f["config"])
m = json.load(open(f"{d}/cmm.json"))
assert "[group.cmm]" in m["config"] and "/redfish/v1/Chassis/Enclosure" in m["config"], m["config"]
open(f"{d}/cmm.conf", "w").write(m["config"])
v = json.load(open(f"{d}/viking.json"))
assert v["chosen"] is None and "no node total" in v["refused"] and v["config"] == "", v["refused"]
print("ok: probe")
PY
for f in fast cmm; do
  erg_ergd_conf <"$PDU_TMP/$f.conf"
  "$ERG" check-config "$PDU_TMP/ergd.conf" >/dev/null ||
    { echo "FAIL: check-config refuses the probe's $f config"; cat "$PDU_TMP/ergd.conf"; exit 1; }
done
sed 's/^\[node.NODE\]/[node.n1]/' "$PDU_TMP/fast.conf" | erg_ergd_conf
cat >>"$PDU_TMP/ergd.conf" <<CONF

[meter.slow]
driver = redfish
host = http://127.0.0.1:$SP
user = admin
password_file = $PDU_TMP/pw

[meter.busy]
driver = redfish
host = http://127.0.0.1:$BP

[meter.dgx]
driver = redfish
host = http://127.0.0.1:$VP

[node.n2]
power = slow
[node.n3]
power = busy
[node.n4]
power = dgx

[meter.timed]
driver = redfish
host = http://127.0.0.1:$TP

[node.n5]
power = timed
CONF
sed -i 's/^\[collector\]/[collector]\npoll_seconds = 1\nstep_seconds = 2\nsettle_steps = 1/' \
  "$PDU_TMP/ergd.conf"
"$ERG" check-config "$PDU_TMP/ergd.conf" >/dev/null
v0=$(curl -sf "http://127.0.0.1:$VP/erg-sim/stats")
"$ERGD" -c "$PDU_TMP/ergd.conf" 2>"$PDU_TMP/ergd.log" &
ERGD_PID=$!
PDU_PIDS="$PDU_PIDS $ERGD_PID"
metrics() { curl -sf "http://127.0.0.1:$HP/metrics"; }
# Discovery first: the fast BMC's ~60 GETs, the slow one's login and 4 GETs
# at 2 s each; then its extra connections' logins (2 s each).
for _ in $(seq 1 350); do
  metrics 2>/dev/null | grep -q 'erg_source_polls_total{source="slow"} \([4-9]\|[1-9][0-9]\)' && break
  sleep 0.1
done
metrics >"$PDU_TMP/m0"
sleep 8
metrics >"$PDU_TMP/m1"
curl -sf "http://127.0.0.1:$FP/erg-sim/stats" >"$PDU_TMP/fast.stats"
if python3 - "$PDU_TMP" <<'PY'
import json, re, sys
d = sys.argv[1]
def parse(f):
    m = {}
    for l in open(f):
        r = re.match(r'(erg_\w+)\{(?:source|node)="([^"]+)"\} (\S+)', l)
        if r:
            m[(r.group(1), r.group(2))] = float(r.group(3))
    return m
m0, m1 = parse(f"{d}/m0"), parse(f"{d}/m1")
polls = lambda s: m1[("erg_source_polls_total", s)] - m0[("erg_source_polls_total", s)]
# fast: 1 s schedule (its 2 GETs take 0.04 s) whatever slow does.
assert polls("fast") >= 7, f"fast: {polls('fast')} polls in 8 s beside a 3 s BMC"
assert m1[("erg_source_poll_errors_total", "fast")] <= 1, m1
# slow answers 2 s late: read ahead, one request a poll_seconds (1 s) with
# up to 4 in flight, so ~8 answers in 8 s; one at a time gave 4 (at most 5).
# One request started a round: at most 8 + the 3 in flight at the start.
assert 6 <= polls("slow") <= 11, f"slow: {polls('slow')} polls in 8 s at 2 s an answer"
assert m1[("erg_source_poll_duration_seconds", "slow")] >= 1.9, m1
assert m1[("erg_source_poll_errors_total", "busy")] >= 1, "busy: no failed poll"
for n in ("n1", "n2"):
    w = m1.get(("erg_node_measured_watts", n), 0)
    assert w > 0, f"{n}: no measured power ({w})"
s = json.load(open(f"{d}/fast.stats"))
assert s["logins"] >= 2 and s["unauthorized"] >= 1, f"no login again after 401: {s}"
print("ok: ergd", {k: polls(k) for k in ("fast", "slow", "busy")}, "polls;", s)
PY
then :; else
  echo "--- ergd.log"; cat "$PDU_TMP/ergd.log"; grep 'source=' "$PDU_TMP/m1" | head -20; exit 1
fi
grep -q "source busy: .*busy.*backing off" "$PDU_TMP/ergd.log" ||
  { echo "FAIL: no backoff said"; cat "$PDU_TMP/ergd.log"; exit 1; }
# Backing off: polls in the backoff send nothing, so the busy BMC got fewer
# reading GETs than ergd made polls.
curl -sf "http://127.0.0.1:$BP/erg-sim/stats" >"$PDU_TMP/busy.stats"
python3 - "$PDU_TMP" <<'PY' || { cat "$PDU_TMP/ergd.log"; exit 1; }
import json, re, sys
d = sys.argv[1]
s = json.load(open(f"{d}/busy.stats"))
polls = float(re.search(r'erg_source_polls_total\{source="busy"\} (\S+)', open(f"{d}/m1").read()).group(1))
assert s["busy"] >= 2, s
# discovery: root, collection, chassis, Power (+ a retry per 503); then 1 GET a poll
assert s["requests"] - 4 - s["busy"] < polls, f"no backoff: {s} for {polls} polls"
PY
# The DGX has no node total: refused, said once, and its tree walked once in
# the run (not every second).
grep -q "source dgx: .*no node total.*HGX" "$PDU_TMP/ergd.log" ||
  { echo "FAIL: the DGX's refusal not said"; cat "$PDU_TMP/ergd.log"; exit 1; }
[ "$(grep -c "source dgx: .*no node total" "$PDU_TMP/ergd.log")" = 1 ] ||
  { echo "FAIL: the DGX's refusal said more than once"; cat "$PDU_TMP/ergd.log"; exit 1; }
v1=$(curl -sf "http://127.0.0.1:$VP/erg-sim/stats")
python3 - "$v0" "$v1" <<'PY' || exit 1
import json, sys
a, b = json.loads(sys.argv[1])["requests"], json.loads(sys.argv[2])["requests"]
# a is the probe's full walk; ergd's one (sensors of parts skipped) is fewer.
assert 0 < b - a <= a, f"ergd made {b - a} requests to the DGX (one walk: <= {a})"
print("ok: DGX walked once,", b - a, "requests")
PY
grep -q "source timed: readings placed by the BMC's own reading time (its clock -36" \
  "$PDU_TMP/ergd.log" || { echo "FAIL: timed's ReadingTime not used"; cat "$PDU_TMP/ergd.log"; exit 1; }
! grep -q "source fast: readings placed by" "$PDU_TMP/ergd.log" ||
  { echo "FAIL: fast's fixed ReadingTime used"; cat "$PDU_TMP/ergd.log"; exit 1; }
grep -q "source fast: .*plain http" "$PDU_TMP/ergd.log" ||
  { echo "FAIL: plain http not said"; cat "$PDU_TMP/ergd.log"; exit 1; }
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
if [ $rc != 0 ] || grep -q "Sanitizer" "$PDU_TMP/ergd.log"; then
  echo "FAIL: ergd exit $rc"; cat "$PDU_TMP/ergd.log"; exit 1
fi
out=$(curl -sf "http://127.0.0.1:$FP/erg-sim/stats")
python3 -c "import json,sys; s=json.loads(sys.argv[1]); assert s['logouts'] >= 1, s" "$out" ||
  { echo "FAIL: ergd did not log out: $out"; exit 1; }
# slow's extra connections (reading ahead) each logged in a session of
# their own, without a discovery of their own, and out at the end.
out=$(curl -sf "http://127.0.0.1:$SP/erg-sim/stats")
python3 -c "import json,sys; s=json.loads(sys.argv[1]); assert s['logins'] >= 2 and s['logouts'] == s['logins'], s" "$out" ||
  { echo "FAIL: slow's sessions: $out"; exit 1; }
echo "ok: redfish end to end"
