#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 23, items 1, 2 and 5, through a real ergd: a node's honest samples
# with poison between them (totals.ncpu = 4294967295, cpu_busy_ns = 1e19,
# a process of cpu_ns = 1e18, an interval from now + 2 s to now + 1 h,
# 1e19 disk bytes), then one sample from each of 150 made-up node names.
# Nothing of the poison may reach the journal (every row's CPU time within
# the node's 4 CPUs, its ncpu 4, no row ahead of the clock, the honest
# seconds after the poison still there), each refusal is counted by reason
# in /metrics and said once in the log; at most max_unconfigured_nodes
# (default 64) nodes get archives, the rest are refused and counted.
# usage: hostile_samples.sh ERGD HOSTILE_SEND
set -euo pipefail
ERGD=$1 SEND=$2
. "$(dirname "$0")/lib.sh"
erg_need ss python3 curl
erg_setup hostile
erg_ports
erg_ergd_conf <<CONF
$(erg_quick_opts)
CONF
erg_start_ergd
metrics() { curl -sf "http://127.0.0.1:$HP/metrics"; }
"$SEND" "tcp://127.0.0.1:$ZP" poison victim 4
"$SEND" "tcp://127.0.0.1:$ZP" names made-up- 150
# All received (1 hello + 5 + 6 poison + 4 live + 150 names), then the
# cells final and the node directories no longer growing.
for _ in $(seq 1 50); do
  metrics | awk '/^erg_agent_messages_total/ { s += $2 } END { exit !(s >= 166) }' && break
  sleep 0.2
done
sleep 3 # the names' cells final (step 1 s, settle 1 s), their archives begun
last=-1 still=0
for _ in $(seq 1 40); do
  n=$(find "$work/data/nodes" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  [ "$n" = "$last" ] && still=$((still + 1)) || still=0
  last=$n
  [ $still -ge 6 ] && break
  sleep 0.5
done
metrics >"$work/metrics.txt"
kill -TERM "$ERGD_PID"
rc=0
wait "$ERGD_PID" || rc=$?
[ $rc = 0 ] || { echo "FAIL: ergd exited with $rc"; tail -20 "$work/ergd.log"; exit 1; }
python3 - "$work" <<'PY'
import os, sys, time
work = sys.argv[1]
m = {}
for l in open(f"{work}/metrics.txt"):
    if l.startswith("erg_agent_messages_total"):
        k, v = l.rsplit(" ", 1)
        m[k] = int(float(v))
def rej(reason):
    return m.get('erg_agent_messages_total{result="rejected",reason="%s"}' % reason, 0)
fails = []
want = {"ncpu": 2, "cpu": 1, "clock": 1, "rate": 1, "malformed": 1}
for reason, n in want.items():
    if rej(reason) != n:
        fails.append(f"reason {reason}: {rej(reason)} rejected, want {n}")
# The victim's hello and 9 honest samples, 63 made-up nodes (the victim is
# the 64th unconfigured node), the other 87 refused.
if rej("unknown_node_cap") != 87:
    fails.append(f"unknown_node_cap: {rej('unknown_node_cap')}, want 87")
ok = m.get('erg_agent_messages_total{result="ok"}', 0)
if ok != 1 + 9 + 63:
    fails.append(f"ok: {ok}, want 73")
dirs = os.listdir(f"{work}/data/nodes")
if len(dirs) > 64:
    fails.append(f"{len(dirs)} node directories, at most 64 wanted")
rows, header = [], None
for l in open(f"{work}/data/journal/victim.csv"):
    f = l.strip().split(",")
    if l.startswith("#"):
        continue
    if f[0] == "time_unix_seconds":
        header = f
        continue
    rows.append(dict(zip(header, f)))
now = time.time()
for r in rows:
    cpu, t0 = float(r["cpu_seconds_per_second"]), int(r["time_unix_seconds"])
    if not 0 <= cpu <= 4 or r.get("ncpu") != "4" or t0 > now:
        fails.append(f"poisoned journal row {r}")
honest = [r for r in rows if not int(r["flags"]) & 2 and float(r["cpu_seconds_per_second"]) > 0.9]
if len(honest) < 6:
    fails.append(f"{len(honest)} journal rows with the honest samples' CPU time, want >= 6")
log = open(f"{work}/ergd.log").read()
said = log.count("max_unconfigured_nodes = 64")
if said != 1:
    fails.append(f"the cap was said {said} times, want once")
if log.count("node victim: agent message refused") != 4:
    fails.append("want one log line per refusal reason of node victim (ncpu, cpu, clock, rate)")
if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    print("".join(l for l in open(f"{work}/metrics.txt") if "messages_total" in l))
    print(log[-3000:])
    sys.exit(1)
print(f"ok: {len(rows)} journal rows of the victim, none poisoned; {len(dirs)} node "
      f"directories for 151 names; refused {', '.join(f'{k} {rej(k)}' for k in want)}, "
      f"unknown_node_cap {rej('unknown_node_cap')}")
PY
