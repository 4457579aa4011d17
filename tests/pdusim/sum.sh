#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-pdusim: per-node truth curves (--node-model), shared meters (--sum)
# and --snmp without Modbus (issues 22 and 25 item 9).
#   n1, n2: empty cgroup2 groups (util 0): power = each node's own idle,
#           60 W (global model) and 80 W (--node-model);
#   n3, n4: one group with a busy loop: n3 its own formula, n4 its own
#           curve file; every --truth row must follow the node's curve;
#   bank = n1 + n2 (Modbus unit 5, SNMP phase 1), all = n1 + .. + n4 (unit
#           6, phase 2): read with mbpoll and snmpget, and in --truth the
#           sum of its nodes within the quantum (noise on, run 2).
# Run 2 serves --snmp only: erg-pdusim must listen on no TCP port.
# usage: sum.sh PDUSIM
set -euo pipefail
PDUSIM=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/lib.sh"
erg_need mbpoll snmpget ss python3
erg_cgroup2
erg_setup pdusim-sum
tag=erg-pdusim-sum-$$
mkdir "$CG2/$tag-idle" "$CG2/$tag-busy" 2>/dev/null ||
  { echo "SKIP: cannot create cgroups in $CG2"; exit 77; }
# shellcheck disable=SC2034 # run by lib.sh's erg_cleanup
ERG_CLEANUP='erg_cg_remove $tag-idle $tag-busy'
erg_in_cg $tag-busy sh -c 'while :; do :; done' &
pids+=($!)
fail() { echo "FAIL: $*"; cat "$work"/sim*.log 2>/dev/null | head -20; exit 1; }
printf '0 100\n0.5 130\n1 250\n' >"$work/curve.txt"
# shellcheck disable=SC2054 # the commas are --node-model's
NODES=(--node "n1=$SIMPREFIX/$tag-idle" --node "n2=$SIMPREFIX/$tag-idle"
       --node "n3=$SIMPREFIX/$tag-busy" --node "n4=$SIMPREFIX/$tag-busy"
       --idle 60 --slope 90 --exponent 1.0
       --node-model n2:idle=80,slope=150,exponent=1.4
       --node-model n3:idle=100,exponent=1.8,slope=200
       --node-model "n4:curve=$work/curve.txt"
       --sum bank=n1+n2 --sum all=n1+n2+n3+n4 --quantum 0.5 --update 0.25)

# What it refuses, and why.
refuse() { # WANT-IN-STDERR ARGS...
  local want=$1 rc=0
  shift
  "$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --duration 1 --node n1 --node n2 --node n3 "$@" \
    >/dev/null 2>"$work/bad.err" || rc=$?
  if [ $rc != 1 ] || ! grep -qF -- "$want" "$work/bad.err"; then
    fail "erg-pdusim $* exited $rc, want 1 and '$want': $(cat "$work/bad.err")"
  fi
  echo "refused $*: $(cat "$work/bad.err")"
}
refuse "no --node n9" --sum x=n1+n9
refuse "n1 is taken" --sum n1=n2+n3
refuse "node n1 twice" --sum x=n1+n1
refuse "no such --node" --node-model n9:idle=1
refuse "no KEY=VALUE" --node-model n1:watts=3
refuse "not both" --node-model "n1:idle=1,curve=$work/curve.txt"
refuse "one already" --node-model n1:idle=1 --node-model n1:slope=2

# ---- run 1: Modbus and SNMP, no noise ----
MB=$(free_port) SP=$(free_udp_port)
"$PDUSIM" --modbus 127.0.0.1:$MB --snmp 127.0.0.1:$SP "${NODES[@]}" --noise 0 --duration 4 \
  --truth "$work/t1.csv" >"$work/sim1.log" 2>&1 &
sim=$!
pids+=("$sim")
wait_port "$MB" || fail "no Modbus port"
sleep 1.2 # the busy group's load is measured, then lagged by one update
mb() { # REF TYPE -> "unit value" lines for units 1,2,5,6 (32-bit values: words abcd)
  mbpoll -m tcp -p "$MB" -a 1,2,5,6 -r "$1" -t "$2" -B -c 1 -1 127.0.0.1 |
    awk '/Polling slave/ { u = $4 + 0 } /^\[/ { print u, $2 }'
}
mb 53 3:float >"$work/w.txt" || fail "mbpoll (power)"
mb 4097 3:int >"$work/j.txt" || fail "mbpoll (joules)"
R2=1.3.6.1.4.1.318.1.1.26
snmpget -v2c -c public -Oqv -t 1 -r 1 127.0.0.1:$SP $R2.9.4.3.1.7.1 $R2.9.4.3.1.7.2 \
  $R2.9.4.3.1.7.3 $R2.9.4.3.1.7.4 $R2.4.3.1.5.1 $R2.4.2.1.7.1 $R2.6.3.1.7.1 $R2.6.3.1.8.1 \
  $R2.6.3.1.9.1 $R2.6.3.1.5.1 $R2.6.3.1.6.1 $R2.6.3.1.7.2 >"$work/snmp.txt" || fail "snmpget"
wait $sim || fail "erg-pdusim run 1 exited $?"
echo "modbus W: $(tr '\n' ' ' <"$work/w.txt")  J: $(tr '\n' ' ' <"$work/j.txt")"
echo "snmp: $(tr '\n' ' ' <"$work/snmp.txt")"

# ---- run 2: --snmp only, with noise ----
SP=$(free_udp_port)
"$PDUSIM" --snmp 127.0.0.1:$SP "${NODES[@]}" --noise 1 --seed 7 --duration 3 \
  --truth "$work/t2.csv" >"$work/sim2.log" 2>&1 &
sim=$!
pids+=("$sim")
for _ in $(seq 1 50); do ss -Hlunp | grep -q "pid=$sim," && break; sleep 0.1; done
ss -Hlunp | grep -q "pid=$sim," || fail "--snmp: no UDP port"
if ss -Hltnp | grep "pid=$sim,"; then fail "--snmp alone opened a TCP port (Modbus)"; fi
grep -q "modbus" "$work/sim2.log" && fail "--snmp alone says it serves Modbus"
snmpget -v2c -c public -Oqv -t 1 -r 1 127.0.0.1:$SP $R2.6.3.1.7.1 >/dev/null || fail "snmpget run 2"
# A second simulator on the same port cannot listen: it must exit non-zero,
# not run on serving nothing (an operator restarting it too soon).
if "$PDUSIM" --snmp 127.0.0.1:$SP "${NODES[@]}" --duration 2 >"$work/sim3.log" 2>&1; then
  fail "a second --snmp on a taken port exited 0"
fi
grep -q "cannot listen" "$work/sim3.log" || fail "no 'cannot listen' from the second simulator"
wait $sim || fail "erg-pdusim run 2 exited $?"
echo "--snmp only: UDP $SP, no TCP port"

python3 - "$work" <<'PY'
import csv, sys
work = sys.argv[1]
Q = 0.5
def q(w): return max(0.0, Q * int(w / Q + 0.5 + 1e-9))
def curve(u):
    pts = [(0, 100), (0.5, 130), (1, 250)]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if u <= x1: return y0 + (u - x0) / (x1 - x0) * (y1 - y0)
    return pts[-1][1]
own = {"n1": lambda u: 60 + 90 * u, "n2": lambda u: 80 + 150 * u ** 1.4,
       "n3": lambda u: 100 + 200 * u ** 1.8, "n4": curve}
SUMS = {"bank": ["n1", "n2"], "all": ["n1", "n2", "n3", "n4"]}
bad = []
def check(ok, what):
    if not ok: bad.append(what)

# Run 1 (no noise): each node on its own curve, idles exact.
rows = list(csv.DictReader(open(f"{work}/t1.csv")))
busy = []
for r in rows:
    n, w = r["node"], float(r["watts"])
    if n in SUMS:
        check(r["util"] == "" and r["lagged_util"] == "", f"sum row with a util: {r}")
        continue
    u = float(r["lagged_util"])
    # util is logged to 6 decimals: a curve value that close to a quantum's
    # edge may round either way.
    ok = any(abs(w - q(own[n](u + e))) < 1e-6 for e in (0, -5e-7, 5e-7))
    check(ok, f"{n}: util {u} gave {w} W, its curve {q(own[n](u))}")
    if n in ("n3", "n4") and u > 0.01: busy.append(u)
check(len(busy) >= 4, f"the busy group never showed load: {busy}")
check({r["node"] for r in rows} == set(own) | set(SUMS), "truth lacks a node or sum")

# Sums in the truth (run 2, noise on: each node's noise, then one rounding):
# the sum of its nodes within what rounding can make of it; energy too.
for name, t in (("run 1", "t1"), ("run 2", "t2")):
    by = {}
    for r in csv.DictReader(open(f"{work}/{t}.csv")):
        by.setdefault(r["time_unix_seconds"], {})[r["node"]] = (float(r["watts"]), float(r["energy_joules"]))
    nrows, moved, t0 = 0, set(), min(map(float, by))
    for ts, m in by.items():
        for s, mem in SUMS.items():
            if s not in m or any(x not in m for x in mem): continue
            # Each node's rounding is within Q/2 and the sum's too, and
            # all are multiples of Q: at most Q x nodes/2 apart.
            tol, tot = Q * len(mem) / 2, sum(m[x][0] for x in mem)
            nrows += 1
            moved.add(m[s][0])
            check(abs(m[s][0] - tot) <= tol + 1e-6, f"{name} {ts}: {s} {m[s][0]} W, its nodes {tot} W")
            e = sum(m[x][1] for x in mem)
            check(abs(m[s][1] - e) <= tol * (float(ts) - t0) + 1e-2,
                  f"{name} {ts}: {s} {m[s][1]} J, its nodes {e} J")
    check(nrows >= 10, f"{name}: {nrows} sum rows")
    if t == "t2": check(len(moved) > 4, "run 2: the sums never moved with the noise")

# Modbus (run 1): units 1, 2 = own idles, 5 = bank, 6 = all; joule counters.
w = dict(l.split() for l in open(f"{work}/w.txt"))
j = {k: float(v) for k, v in (l.split() for l in open(f"{work}/j.txt"))}
w = {int(k): float(v) for k, v in w.items()}
j = {int(k): v for k, v in j.items()}
check(w.get(1) == 60 and w.get(2) == 80 and w.get(5) == 140, f"modbus W {w}: want 60, 80, 140")
check(w.get(6, 0) >= 140 + 200, f"modbus unit 6 (all) {w.get(6)} W: want >= 340")
check(len(j) == 4 and abs(j[5] - j[1] - j[2]) <= 0.5 * 140, f"modbus J {j}: unit 5 != 1 + 2")
check(len(j) == 4 and j[6] > j[5], f"modbus J {j}")

# SNMP (run 1, one GET, one snapshot): outlets, device = their sum, phases.
v = [int(x) for x in open(f"{work}/snmp.txt").read().split()]
o1, o2, o3, o4, dev, nph, p1, va1, pf1, a1, v1, p2 = v
check((o1, o2) == (60, 80), f"snmp outlets 1, 2: {o1}, {o2} W")
check(abs(dev * 10 - (o1 + o2 + o3 + o4)) <= 7, f"snmp device {dev} x 10 W != outlets {o1 + o2 + o3 + o4}")
check(nph == 2 and p1 == 14 and va1 == 14 and pf1 == 100, f"snmp phase 1: {nph} phases, {p1} {va1} {pf1}")
check(a1 == round(140 / 230 * 10) and v1 == 230, f"snmp phase 1 current {a1} x 0.1 A at {v1} V")
check(abs(p2 - dev) <= 1, f"snmp phase 2 (all) {p2} != device {dev}")
if bad:
    print("FAIL:\n  " + "\n  ".join(bad[:20]))
    sys.exit(1)
print(f"ok: own curves on {len(rows)} truth rows ({len(busy)} busy), sums within {Q} W x nodes/2, "
      f"modbus units 1 2 5 6 = {w[1]} {w[2]} {w[5]} {w[6]} W, snmp phase 1 = {p1} x 10 W")
PY
