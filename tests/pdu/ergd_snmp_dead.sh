#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# ergd polls two live SNMP PDUs (erg-pdusim agents) and one that never
# answers (a UDP socket that swallows requests; timeout 3 s x 2 tries, far
# longer than the 1 s period). The live PDUs must keep their 1 s schedule:
# their poll count grows ~1/s and their poll duration stays small, while
# the dead one fails every round within the period.
# usage: ergd_snmp_dead.sh PDUSIM ERGD
set -euo pipefail
PDUSIM=$1; ERGD=$2
. "$(dirname "$0")/snmp_lib.sh"
erg_need python3 curl snmpget
SA=$(free_udp_port); SB=$(free_udp_port); ZP=$(free_port); HP=$(free_port)
"$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --snmp 127.0.0.1:"$SA" --node a1 --node a2 \
  --update 0.2 >"$PDU_TMP/sima.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
"$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --snmp 127.0.0.1:"$SB" --node b1 \
  --update 0.2 >"$PDU_TMP/simb.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
# The dead PDU: binds its port (so no ICMP "port unreachable" ends the
# wait early) and never answers.
python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",0))
print(s.getsockname()[1], flush=True)
while True: s.recv(65536)' >"$PDU_TMP/deadport" &
PDU_PIDS="$PDU_PIDS $!"
for p in "$SA" "$SB"; do
  for _ in $(seq 1 50); do
    snmpget -v2c -c public -t 0.2 -r 0 127.0.0.1:"$p" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 && break
    sleep 0.1
  done
done
for _ in $(seq 1 50); do [ -s "$PDU_TMP/deadport" ] && break; sleep 0.1; done
DP=$(cat "$PDU_TMP/deadport")
erg_ergd_conf <<CONF
poll_seconds = 1

[pdu.live-a]
host = 127.0.0.1
port = $SA

[pdu.dead]
host = 127.0.0.1
port = $DP
profile = apc-rpdu2
timeout_seconds = 3
retries = 1

[pdu.live-b]
host = 127.0.0.1
port = $SB
profile = apc-rpdu2

[node.a1]
power = live-a:1
[node.a2]
power = live-a:2
[node.b1]
power = live-b:1
[node.x]
power = dead:1
CONF
"$ERGD" -c "$PDU_TMP/ergd.conf" 2>"$PDU_TMP/ergd.log" &
ERGD_PID=$!
PDU_PIDS="$PDU_PIDS $ERGD_PID"
metrics() { curl -sf "http://127.0.0.1:$HP/metrics"; }
for _ in $(seq 1 50); do metrics >/dev/null 2>&1 && break; sleep 0.1; done
sleep 3
metrics >"$PDU_TMP/m0"
sleep 6
metrics >"$PDU_TMP/m1"
python3 - "$PDU_TMP" <<'PY'
import re, sys
d = sys.argv[1]
def parse(f):
    m = {}
    for l in open(f):
        r = re.match(r'(erg_source_\w+)\{source="([^"]+)"\} (\S+)', l)
        if r:
            m[(r.group(1), r.group(2))] = float(r.group(3))
    return m
m0, m1 = parse(f"{d}/m0"), parse(f"{d}/m1")
for s in ("live-a", "live-b"):
    polls = m1[("erg_source_polls_total", s)] - m0[("erg_source_polls_total", s)]
    errs = m1[("erg_source_poll_errors_total", s)]
    dur = m1[("erg_source_poll_duration_seconds", s)]
    # 6 s at 1 s: 6 rounds (one may straddle a scrape); one 6 s dead
    # timeout per round would give 1.
    assert 5 <= polls <= 7, f"{s}: {polls} polls in 6 s"
    assert errs == 0, f"{s}: {errs} errors"
    assert 0 < dur < 0.5, f"{s}: last poll took {dur} s"
dead_err = m1[("erg_source_poll_errors_total", "dead")] - m0[("erg_source_poll_errors_total", "dead")]
dead_dur = m1[("erg_source_poll_duration_seconds", "dead")]
assert dead_err >= 5, f"dead: {dead_err} failed polls in 6 s"
assert 0.85 <= dead_dur <= 1.5, f"dead: gave up after {dead_dur} s (round limit 0.9 s; 6 s without)"
print("ok: live polls on schedule; dead PDU cut at", dead_dur, "s each round")
PY
grep -q "source dead: .*no answer within the round limit" "$PDU_TMP/ergd.log" ||
  { echo "FAIL: no round-limit reason in the log"; cat "$PDU_TMP/ergd.log"; exit 1; }
# A clean stop (and, in a sanitizer build, no leak or memory error report).
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
if [ $rc != 0 ] || grep -q "Sanitizer" "$PDU_TMP/ergd.log"; then
  echo "FAIL: ergd exit $rc"; cat "$PDU_TMP/ergd.log"; exit 1
fi
