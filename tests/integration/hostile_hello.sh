#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 35: a hostile hello claims 4 CPUs for a 2-CPU node in the middle of
# its agent's run. The hello and the samples then claiming 4 CPUs (3.5
# busy) are refused (erg_agent_messages_total{result="rejected",
# reason="ncpu"}, said once in the log); no journal row of the node holds
# more than its 2 CPUs' time, and the honest seconds before are there.
# usage: hostile_hello.sh ERGD HOSTILE_SEND
set -euo pipefail
ERGD=$1 SEND=$2
. "$(dirname "$0")/lib.sh"
erg_need ss python3 curl
erg_setup hostile-hello
erg_ports
erg_ergd_conf <<CONF
$(erg_quick_opts)
CONF
erg_start_ergd
N=6
"$SEND" "tcp://127.0.0.1:$ZP" hello_ncpu twocpu $N
erg_wait_agent_messages $((N + 1))
sleep 3 # the last cells final (step 1 s, settle 1 s)
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
kill -TERM "$ERGD_PID"
wait "$ERGD_PID" || { echo "FAIL: ergd exited with $?"; tail -20 "$work/ergd.log"; exit 1; }
python3 - "$work" "$N" <<'PY'
import sys
work, n = sys.argv[1], int(sys.argv[2])
m = {}
for l in open(f"{work}/metrics.txt"):
    if l.startswith("erg_agent_messages_total"):
        k, v = l.rsplit(" ", 1)
        m[k] = int(float(v))
rej = m.get('erg_agent_messages_total{result="rejected",reason="ncpu"}', 0)
ok = m.get('erg_agent_messages_total{result="ok"}', 0)
fails = []
if rej != 1 + n:
    fails.append(f"{rej} refused for ncpu, want {1 + n} (the hello and its {n} samples)")
if ok != 1 + n:
    fails.append(f"{ok} accepted, want {1 + n} (the first hello and the honest samples)")
header, rows = None, []
for l in open(f"{work}/data/journal/twocpu.csv"):
    f = l.strip().split(",")
    if l.startswith("#"):
        continue
    if f[0] == "time_unix_seconds":
        header = f
        continue
    rows.append(dict(zip(header, f)))
busy = [float(r["cpu_seconds_per_second"]) for r in rows]
if any(b > 2 * 1.25 for b in busy) or any(r.get("ncpu") not in ("2", "0") for r in rows):
    fails.append(f"rows beyond the node's 2 CPUs: {rows}")
if sum(1 for b in busy if b > 1.4) < n - 2:
    fails.append(f"the honest seconds are missing: {busy}")
log = open(f"{work}/ergd.log").read()
if log.count("node twocpu: agent message refused") != 1 or "more than the 2 its agent's run started with" not in log:
    fails.append("want one log line saying the hello's 4 CPUs are more than the run's 2")
if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    print(log[-3000:])
    sys.exit(1)
print(f"ok: hostile hello and {n} samples of 4 CPUs refused; {len(rows)} journal rows, "
      f"at most {max(busy):.2f} CPU-s/s on 2 CPUs")
PY
