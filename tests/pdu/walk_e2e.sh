#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-pdusim --snmp-walk end to end: recordings of two real PDUs served with
# live values where erg reads, polled by ergd with no profile in its config
# (detected as online) and by erg pdu probe.
#   (a) inlet level: sentry4.snmprec, inlet 1 = node s1
#   (b) outlet level: raritan-pdu_px3.snmprec, outlet 2 = r2, outlet 13 = r13
# Nodes follow cgroup2 groups where the host lets us make them: r2 an empty
# one (exactly the idle power), s1 and r13 one with a ~15 % busy loop, so a
# swapped outlet shows; else all follow the machine's load.
# Checks:
#  * bad --walk-channel (unknown entity, level the profile lacks, no such
#    node, no --snmp-walk) exits 1 with the reason;
#  * snmpbulkwalk of each agent returns every recorded OID with its recorded
#    type, and its recorded value except at the OIDs erg-pdusim says are live;
#  * ergd's journal: per node, the mean of measured_watts over the cells of
#    the run is within 3 % of the mean of erg-pdusim's --truth over the same
#    cells. Why 3 %: the agent rounds to whole W (<= 0.5 W, 0.6 % at 80 W);
#    ergd samples once a second what the simulator holds for a second
#    (--update 1), so a cell may get its neighbour's value: over a window
#    of N cells that moves the sum by at most the power's change across the
#    window's two ends, 2 x ~20 W (the busy loop's swing with slope 200 W)
#    over >= 15 cells of >= 80 W: < 3.4 % in the worst case, far less in
#    practice. A static (recorded: 1701, 207, 390 W) or swapped value is off
#    by 30 % and more.
#  * erg pdu probe reports, at each bound entity, the OID erg-pdusim made
#    live and a value the truth showed while the probe ran; the energy
#    counter starts at the recorded reading.
# usage: walk_e2e.sh PDUSIM ERGD ERG DIR
set -euo pipefail
PDUSIM=$1 ERGD=$2 ERG=$3 DIR=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/snmp_lib.sh"
erg_need python3 curl ss snmpget snmpbulkwalk
S4=$DIR/sentry4.snmprec RX=$DIR/raritan-pdu_px3.snmprec
[ -f "$S4" ] && [ -f "$RX" ] || { echo "SKIP: no recordings in $DIR"; exit 77; }

# ---- cgroups for the loads (optional) ----
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
tag=erg-walk-$$
busy=""
cg=0
if [ -n "$CG2" ] && mkdir "$CG2/$tag-idle" 2>/dev/null; then
  if mkdir "$CG2/$tag-busy" 2>/dev/null; then cg=1; else rmdir "$CG2/$tag-idle"; fi
fi
walk_cleanup() {
  [ -z "$busy" ] || kill "$busy" 2>/dev/null || true
  if [ $cg = 1 ]; then
    sleep 0.2
    rmdir "$CG2/$tag-idle" "$CG2/$tag-busy" 2>/dev/null || true
  fi
  pdu_cleanup
}
trap walk_cleanup EXIT
if [ $cg = 1 ]; then
  prefix=${CG2#/sys/fs/cgroup}
  # ~15 % of one CPU: a steady load that leaves the machine to others.
  sh -c 'echo $$ > "$0/cgroup.procs" && exec python3 -c "
import time
while True:
    t = time.monotonic()
    while time.monotonic() - t < 0.015: pass
    time.sleep(0.085)"' "$CG2/$tag-busy" &
  busy=$!
  N_S1="s1=$prefix/$tag-busy" N_R2="r2=$prefix/$tag-idle" N_R13="r13=$prefix/$tag-busy"
  echo "loads: r2 in an empty cgroup2 group, s1 and r13 in one with a busy loop"
else
  N_S1=s1 N_R2=r2 N_R13=r13
  echo "loads: no cgroup2 groups here; every node follows the machine's load"
fi
MODEL=(--idle 80 --slope 200 --noise 0 --quantum 0 --update 1)

# ---- what --walk-channel refuses ----
refuse() { # WANT-IN-STDERR ARGS...
  local want=$1 rc=0; shift
  "$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --snmp 127.0.0.1:"$(free_udp_port)" --duration 1 \
    "$@" >"$PDU_TMP/refuse.out" 2>"$PDU_TMP/refuse.err" || rc=$?
  if [ $rc != 1 ] || ! grep -qF -- "$want" "$PDU_TMP/refuse.err"; then
    echo "FAIL: erg-pdusim $* exited $rc, want 1 and '$want':"; cat "$PDU_TMP/refuse.err"; exit 1
  fi
  echo "refused: $(cat "$PDU_TMP/refuse.err")"
}
refuse "the walk has no outlet 99" --snmp-walk "$RX" --node a --walk-channel outlet:99=a
refuse "profile servertech-sentry4 has no device level" --snmp-walk "$S4" --node a \
  --walk-channel device=a
refuse "the walk has no inlet 3" --snmp-walk "$S4" --node a --walk-channel inlet:3=a
refuse "no --node b" --snmp-walk "$S4" --node a --walk-channel inlet:1=b
refuse "want LEVEL:N=NODE" --snmp-walk "$S4" --node a --walk-channel rack:1=a
refuse "--walk-channel needs --snmp-walk" --node a --walk-channel inlet:1=a

# ---- the two agents ----
SS=$(free_udp_port) SR=$(free_udp_port)
"$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --snmp 127.0.0.1:"$SS" --snmp-walk "$S4" \
  --node "$N_S1" --walk-channel inlet:1=s1 "${MODEL[@]}" --truth "$PDU_TMP/truth-s.csv" \
  --duration 100 >"$PDU_TMP/sim-s.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
"$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --snmp 127.0.0.1:"$SR" --snmp-walk "$RX" \
  --node "$N_R2" --node "$N_R13" --walk-channel outlet:2=r2 --walk-channel outlet:13=r13 \
  "${MODEL[@]}" --truth "$PDU_TMP/truth-r.csv" --duration 100 >"$PDU_TMP/sim-r.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
for p in "$SS" "$SR"; do
  ok=0
  for _ in $(seq 1 100); do
    snmpget -v2c -c public -t 0.2 -r 0 127.0.0.1:"$p" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 && { ok=1; break; }
    sleep 0.1
  done
  [ $ok = 1 ] || { echo "FAIL: no agent on $p"; cat "$PDU_TMP"/sim-*.log; exit 1; }
done
cat "$PDU_TMP/sim-s.log" "$PDU_TMP/sim-r.log" | grep -E "profile|live"

# ---- every recorded OID as recorded ----
snmpbulkwalk -v2c -c public -On -Ox -Ot 127.0.0.1:"$SS" . >"$PDU_TMP/walk-s.txt"
snmpbulkwalk -v2c -c public -On -Ox -Ot 127.0.0.1:"$SR" . >"$PDU_TMP/walk-r.txt"
python3 - "$S4" "$PDU_TMP/walk-s.txt" "$PDU_TMP/sim-s.log" "$RX" "$PDU_TMP/walk-r.txt" \
  "$PDU_TMP/sim-r.log" <<'PY'
import re, sys
LABEL = {"2": "INTEGER", "4": "Hex-STRING", "6": "OID", "64": "IpAddress", "65": "Counter32",
         "66": "Gauge32", "67": "Timeticks", "70": "Counter64"}
def recording(path):
    rec = {}
    for line in open(path, "rb"):
        parts = line.rstrip(b"\r\n").split(b"|", 2)
        if len(parts) != 3:
            continue
        oid, typ, val = parts[0].decode().lstrip("."), parts[1].decode(), parts[2]
        if typ.endswith("x"):
            typ, val = typ[:-1], bytes.fromhex(val.decode())
        rec.setdefault(oid, (typ, val))
    return rec
def walked(path):
    """snmpbulkwalk -On -Ox -Ot: '.OID = TYPE: VALUE', hex wrapped over lines."""
    got, cur = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"\.([0-9.]+) = (?:([\w-]+): ?)?(.*)$", line)
        if m and m.group(3).startswith("No more variables left"):
            cur = None  # endOfMibView past the last OID, as snmpd's walks end
        elif m:
            cur = m.group(1)
            got[cur] = [m.group(2) or "", m.group(3)]
        elif cur and line.strip():
            got[cur][1] += " " + line.strip()
    return got
def same(typ, val, label, text):
    if LABEL.get(typ) == "Hex-STRING":
        if not val:
            return text == '""'
        return label == "Hex-STRING" and bytes.fromhex(text.replace(" ", "")) == val
    if label != LABEL.get(typ) and not (typ == "67" and label == ""):  # -Ot: bare ticks
        return False
    v = val.decode()
    if typ == "6":
        return text.lstrip(".") == v.lstrip(".")
    if typ == "64":
        return text == v
    return int(text) == int(v)
for recf, walkf, logf in ((sys.argv[1], sys.argv[2], sys.argv[3]), (sys.argv[4], sys.argv[5], sys.argv[6])):
    rec, got = recording(recf), walked(walkf)
    live = set(re.findall(r"live .*?: \w+ ([0-9.]+) \(", open(logf).read()))
    assert live, f"{logf}: no live OIDs"
    missing = [o for o in rec if o not in got]
    extra = [o for o in got if o not in rec]
    assert not missing and not extra, f"{recf}: missing {missing[:5]}, extra {extra[:5]}"
    bad = [o for o, (t, v) in rec.items() if o not in live and not same(t, v, *got[o])]
    assert not bad, f"{recf}: {len(bad)} differ, e.g. {[(o, rec[o], got[o]) for o in bad[:3]]}"
    for o in live:
        assert got[o][0] == LABEL[rec[o][0]] or (rec[o][0] == "67" and got[o][0] == ""), \
            f"{o}: type {got[o][0]}, recorded {rec[o][0]}"
    print(f"ok {recf.split('/')[-1]}: {len(rec)} OIDs served as recorded, {len(live)} live")
PY

# ---- ergd, no profile in its config ----
ZP=$(free_port) HP=$(free_port)
erg_ergd_conf <<CONF
poll_seconds = 1
step_seconds = 1
settle_steps = 2

[pdu.sentry]
host = 127.0.0.1
port = $SS

[pdu.px3]
host = 127.0.0.1
port = $SR

[node.s1]
power = sentry:inlet:1
[node.r2]
power = px3:outlet:2
[node.r13]
power = px3:outlet:13
CONF
erg_start_ergd
sleep 12
# The probe while ergd polls, against the same agents.
probe() { # PORT OUT
  date +%s.%N >"$2.t0"
  "$ERG" pdu probe --driver snmp --host 127.0.0.1:"$1" --json >"$2" 2>"$2.err" ||
    { echo "FAIL: erg pdu probe on $1"; cat "$2.err"; exit 1; }
  date +%s.%N >"$2.t1"
}
probe "$SS" "$PDU_TMP/probe-s.json"
probe "$SR" "$PDU_TMP/probe-r.json"
sleep 18
curl -sf "http://127.0.0.1:$HP/metrics" >"$PDU_TMP/metrics"
kill -TERM "$ERGD_PID"
rc=0; wait "$ERGD_PID" || rc=$?
[ $rc = 0 ] || { echo "FAIL: ergd exit $rc"; cat "$PDU_TMP/ergd.log"; exit 1; }

python3 - "$PDU_TMP" "$cg" <<'PY'
import bisect, csv, json, math, re, sys
d, cg = sys.argv[1], sys.argv[2] == "1"
def truth(path):
    t = {}
    for r in csv.DictReader(open(path)):
        t.setdefault(r["node"], []).append((float(r["time_unix_seconds"]), float(r["watts"]),
                                            float(r["energy_joules"])))
    return t
tr = truth(f"{d}/truth-s.csv")
tr.update(truth(f"{d}/truth-r.csv"))
def mean(rows, a, b):
    """Time-weighted mean of the held value over [a, b]."""
    ts = [r[0] for r in rows]
    i = bisect.bisect_right(ts, a) - 1
    acc, t = 0.0, a
    while t < b:
        nxt = ts[i + 1] if i + 1 < len(ts) else math.inf
        end = min(nxt, b)
        acc += rows[i][1] * (end - t)
        t, i = end, i + 1
    return acc / (b - a)
# /metrics: every poll answered, power measured (not estimated).
m = {}
for l in open(f"{d}/metrics"):
    r = re.match(r"(erg_\w+)\{([^}]*)\} (\S+)", l)
    if r:
        m[(r.group(1), r.group(2))] = float(r.group(3))
for s in ("sentry", "px3"):
    polls, errs = m[("erg_source_polls_total", f'source="{s}"')], m[("erg_source_poll_errors_total", f'source="{s}"')]
    assert polls >= 25 and errs == 0, f"{s}: {polls} polls, {errs} errors"
for k, v in m.items():
    if k[0] == "erg_meter_power_estimated":
        assert v == 0, f"{k}: power estimated"
means = {}
for node in ("s1", "r2", "r13"):
    rows = tr[node]
    jr = [l.split(",") for l in open(f"{d}/data/journal/{node}.csv") if l[0].isdigit()]
    cells = [(int(r[0]), int(r[1]), float(r[2])) for r in jr if r[2] not in ("", "nan")]
    # Cells well inside the truth's span, past ergd's first rounds.
    cells = [c for c in cells[3:] if c[0] >= rows[1][0] + 1 and c[0] + c[1] <= rows[-1][0]]
    assert len(cells) >= 15, f"{node}: {len(cells)} cells"
    got = sum(c[2] for c in cells) / len(cells)
    want = sum(mean(rows, c[0], c[0] + c[1]) for c in cells) / len(cells)
    worst = max(abs(c[2] - mean(rows, c[0], c[0] + c[1])) for c in cells)
    rel = abs(got - want) / want
    print(f"{node}: {len(cells)} cells, ergd mean {got:.2f} W, truth mean {want:.2f} W, "
          f"diff {100 * rel:.2f} % (largest cell diff {worst:.1f} W)")
    assert rel < 0.03, f"{node}: ergd {got:.2f} W vs truth {want:.2f} W"
    means[node] = want
if cg:
    assert all(r[1] == 80 for r in tr["r2"]), "r2 (empty group) not at idle"
    # The busy loop must set r13 apart by more than the 3 % bound, so a
    # swap of r2 and r13 would fail it (under load it gets < 15 % of a CPU).
    assert means["r13"] - means["r2"] > 1.2 * 0.03 * means["r2"], \
        f"r13 {means['r13']:.1f} W, r2 {means['r2']:.1f} W: too close to show a swap"
# The probe: the live OID at each bound entity, a value the truth showed.
def sim_live(log):
    live = {}
    for lvl, n, q, oid in re.findall(r"live (\w+) (\d+) = node \w+: (\w+) ([0-9.]+)", open(log).read()):
        live[(lvl, int(n), q)] = oid
    return live
for tag, binds, recorded_kwh in (("s", {("inlet", 1): "s1"}, {("inlet", 1): 893.7}),
                                 ("r", {("outlet", 2): "r2", ("outlet", 13): "r13"},
                                  {("outlet", 2): 6564.342, ("outlet", 13): 12711.248})):
    j = json.load(open(f"{d}/probe-{tag}.json"))
    live = sim_live(f"{d}/sim-{tag}.log")
    prof = re.search(r"erg profile (\S+):", open(f"{d}/sim-{tag}.log").read()).group(1)
    assert j["profile"] == prof, f"probe says {j['profile']}, erg-pdusim {prof}"
    t0, t1 = float(open(f"{d}/probe-{tag}.json.t0").read()), float(open(f"{d}/probe-{tag}.json.t1").read())
    for (lvl, n), node in binds.items():
        row = next(r for r in j["rows"] if r["level"] == lvl and r["index"] == n)
        assert row["oids"]["power"] == live[(lvl, n, "power")], (row["oids"], live)
        rows = tr[node]
        shown = [w for (t, w, e), nxt in zip(rows, rows[1:] + [(math.inf,)]) if t <= t1 and nxt[0] >= t0]
        assert min(shown) - 0.51 <= row["watts"] <= max(shown) + 0.51, \
            f"{node}: probe {row['watts']} W, truth showed {shown}"
        e_run = rows[-1][2] / 3.6e6
        assert recorded_kwh[(lvl, n)] - 1e-9 <= row["energy_kwh"] <= recorded_kwh[(lvl, n)] + e_run + 1e-3, \
            f"{node}: probe energy {row['energy_kwh']} kWh, recorded {recorded_kwh[(lvl, n)]}"
        print(f"probe {lvl} {n} = {node}: {row['watts']} W (truth {min(shown)}..{max(shown)} W), "
              f"{row['energy_kwh']} kWh at {row['oids']['power']}")
print("ok")
PY
