#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# ergd reads BMCs over IPMI DCMI (driver = ipmi, lanplus to simulated BMCs:
# pdusim/dcmi_bmc.py on pyghmi's IPMI 2.0 server) into cells: a BMC whose
# power the test changes (300 W, then 450 W) gives cells at both; an
# OpenBMC-style reading marked inactive is taken, noted once; a BMC reading
# 0 W gives no power, said once and counted; a wrong password is said once
# (logins retried once a minute, not every poll); a BMC that never answers
# fails each round within its timeout while the others keep the schedule,
# and ergd still stops promptly on SIGTERM. A BMC that answers 2 s late is
# read ahead (several sessions, a request each poll_seconds): more answers
# in a window than one request at a time can bring.
# usage: ipmi_ergd.sh ERGD
set -euo pipefail
ERGD=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/snmp_lib.sh"
. "$here/ipmi_lib.sh"
erg_need curl
ipmi_bmc live --watts 300; P_LIVE=$BMC_PORT; CTL_LIVE=$BMC_CTL
ipmi_bmc openbmc --watts 287; P_OB=$BMC_PORT
printf 'active=0\n' >"$BMC_CTL"
ipmi_bmc zero --watts 0; P_ZERO=$BMC_PORT
ipmi_bmc slow --watts 350 --delay 2 --async-delay; P_SLOW=$BMC_PORT
PW=$(ipmi_pwfile good password)
BAD=$(ipmi_pwfile bad wrong)
# The dead BMC: binds its port (no ICMP unreachable) and never answers.
"$PY" -c 'import socket
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",0))
print(s.getsockname()[1], flush=True)
while True: s.recv(65536)' >"$PDU_TMP/deadport" &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 50); do [ -s "$PDU_TMP/deadport" ] && break; sleep 0.1; done
P_DEAD=$(cat "$PDU_TMP/deadport")
ZP=$(free_port); HP=$(free_port)
bmc() { printf '[meter.%s]\ndriver = ipmi\nhost = 127.0.0.1\nport = %s\nuser = admin\npassword_file = %s\n' "$@"; }
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
$(bmc live "$P_LIVE" "$PW")
$(bmc openbmc "$P_OB" "$PW")
$(bmc zero "$P_ZERO" "$PW")
$(bmc wrongpw "$P_LIVE" "$BAD")
$(bmc slow "$P_SLOW" "$PW")
timeout_seconds = 3
$(bmc dead "$P_DEAD" "$PW")
timeout_seconds = 0.6
retries = 1
[node.a]
power = live
[node.b]
power = openbmc
[node.z]
power = zero
[node.w]
power = wrongpw
[node.d]
power = dead
[node.s]
power = slow
CONF
"$ERGD" -c "$PDU_TMP/ergd.conf" >"$PDU_TMP/ergd.log" 2>&1 &
ERGD_PID=$!
PDU_PIDS="$PDU_PIDS $ERGD_PID"
wait_port "$HP"
start=$(date +%s.%N)
# until node a has a cell at W (at most 20 s; the checks below say if not)
cell_at() {
  local i
  for i in $(seq 1 100); do
    awk -F, -v w="$1" '$1 ~ /^[0-9]/ && $3 > w - 0.5 && $3 < w + 0.5 { f = 1 } END { exit !f }' \
      "$PDU_TMP/data/journal/a.csv" 2>/dev/null && return 0
    sleep 0.2
  done
}
cell_at 300
# more cells of the others; slow's answers counted over 6 s
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/m0.txt"
w0=$(date +%s.%N)
sleep 6
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/m1.txt"
window=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
printf 'watts=450\n' >"$CTL_LIVE"
cell_at 450
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/metrics.txt"
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
t0=$(date +%s.%N)
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
t1=$(date +%s.%N)
if [ $rc != 0 ] || grep -q "Sanitizer" "$PDU_TMP/ergd.log"; then
  echo "FAIL: ergd exit $rc"; cat "$PDU_TMP/ergd.log"; exit 1
fi
"$PY" - "$PDU_TMP" "$t0" "$t1" "$elapsed" "$window" <<'PY'
import math, os, re, sys
d, t0, t1, elapsed, window = sys.argv[1], *map(float, sys.argv[2:6])
metrics = open(f"{d}/metrics.txt").read()
log = open(f"{d}/ergd.log").read()

def journal(node):
    rows, path = [], f"{d}/data/journal/{node}.csv"
    for line in open(path) if os.path.exists(path) else []:
        if line[0].isdigit():
            t, step, w, flags = line.split(",")[:4]
            rows.append((int(t), float(w), int(flags)))
    return rows

def metric(name, source, text=None):
    m = re.search(rf'^{name}{{source="{source}"[^}}]*}} (\S+)$', text or metrics, re.M)
    assert m, f"no {name} for {source}"
    return float(m.group(1))

a = [w for t, w, f in journal("a") if not f & 1 and not math.isnan(w)]
assert any(abs(w - 300) < 0.5 for w in a) and any(abs(w - 450) < 0.5 for w in a), a
assert all(299.5 < w < 450.5 for w in a), a
b = [w for t, w, f in journal("b") if not f & 1 and not math.isnan(w)]
assert len(b) >= 2 and all(abs(w - 287) < 0.5 for w in b), b
for node in ("z", "w", "d"):
    bad = [r for r in journal(node) if not (r[2] & 1) or not math.isnan(r[1])]
    assert not bad, f"{node}: measured power without a reading: {bad}"
def once(pat):
    n = len(re.findall(pat, log))
    assert n == 1, f"logged {n} times, not once: {pat}\n{log}"
once(r"source openbmc: .*inactive but reads 287 W; taken")
once(r"source zero outlet 1: DCMI Get Power Reading: current power 0 W")
once(r"source wrongpw: .*password invalid")
assert metric("erg_meter_bad_values_total", "zero") >= 4, "0 W polls not counted"
# Polls every 0.5 s: the live BMC on schedule despite the dead one (a
# dead BMC's 1.2 s per poll in the same thread would give at most a third).
live = metric("erg_source_polls_total", "live")
assert live >= 0.7 * elapsed / 0.5, f"live: {live} polls in {elapsed:.1f} s"
assert metric("erg_source_poll_errors_total", "live") == 0
# Its timeout x tries, 1.2 s (more allowed for a loaded machine, not 10 s).
dead = metric("erg_source_poll_duration_seconds", "dead")
assert 0.5 <= dead <= 3, f"dead BMC gave up after {dead} s (timeout 0.6 s x 2 tries)"
assert metric("erg_source_poll_errors_total", "wrongpw") >= 0.7 * elapsed / 0.5
# slow answers 2 s late: one request at a time gives at most window / 2 + 1
# answers; read ahead (a request a poll_seconds, up to 4 in flight) about
# 1.6 a second, and never more than one request a round plus those in flight.
slow = metric("erg_source_polls_total", "slow", open(f"{d}/m1.txt").read()) - \
    metric("erg_source_polls_total", "slow", open(f"{d}/m0.txt").read())
assert window / 2 + 2 <= slow <= window / 0.5 + 4, f"slow: {slow} answers in {window:.1f} s"
assert metric("erg_source_poll_duration_seconds", "slow") >= 1.9
s = [w for t, w, f in journal("s") if not f & 1 and not math.isnan(w)]
assert s and all(abs(w - 350) < 0.5 for w in s), s
stop = t1 - t0
assert stop < 5, f"ergd took {stop:.1f} s to stop on SIGTERM"
print(f"ok: live cells at 300 and 450 W ({len(a)}), openbmc {len(b)} cells at 287 W "
      f"(inactive noted once), 0 W and the wrong password said once, dead BMC cut at "
      f"{dead:.2f} s, live polled {live:.0f} times, slow {slow:.0f} answers in {window:.1f} s; stopped {stop:.2f} s after SIGTERM")
PY
