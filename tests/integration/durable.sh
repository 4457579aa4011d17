#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Nothing lost when ergd dies. erg-pdusim + ergd + an agent that also
# writes every sample it sends (--dump-file). Mid-run, with cells open,
# ergd dies and comes back 4 s later:
#   kill:  ergd is stopped (SIGSTOP) for 2 s first, so samples sit in its
#          socket buffers, unread, when it is killed -9: lost from both
#          ends unless the agent resends them; what ergd had read but not
#          finalised must come back from its write-ahead log;
#   term:  SIGTERM (graceful): the open cells come back from the log.
# Then EVERY cell of the run is checked against the agent's dump and the
# simulator's truth: present (no NaN, journalled once, in order), with
# agent data, its CPU time that of the samples the agent sent (apportioned
# by overlap), its measured power that of the meter (the cells across the
# outage bridged by the energy counter: their energy sums to the truth),
# idle + dynamic = measured and Σ command keys = dynamic; resent copies
# counted as such, never as a duplicate agent.
# usage: durable.sh PDUSIM ERGD AGENT kill|term
# ERG_TEST_WAL=no / ERG_TEST_RESEND=0 turn the two mechanisms off (to see
# the test fail without them).
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3 MODE=$4
. "$(dirname "$0")/lib.sh"
erg_need curl python3 rrdtool ss
"$AGENT" --help 2>&1 | grep -q -- --dump-file || { echo "SKIP: erg-agent has no --dump-file"; exit 77; }
erg_setup durable
erg_ports
erg_ergd_conf <<CONF
settle_steps = 2
poll_seconds = 0.5
lag_max_seconds = 0
${ERG_TEST_WAL:+wal = $ERG_TEST_WAL}
$(erg_sim_meter)
[node.du-node]
power = sim
idle_watts = 40
CONF
printf '[agent]\nresend_samples = %s\n' "${ERG_TEST_RESEND:-60}" >"$work/agent.conf"
erg_start_pdusim --node du-node --idle 100 --slope 20 --update 0.5 --truth "$work/truth.csv"
erg_start_ergd "$work/ergd1.log"
# A steady load of a name of our own (other tests run sha256sum too).
cp "$(command -v sha256sum)" "$work/duburn$$"
"$work/duburn$$" /dev/zero &
pids+=($!)
erg_start_agent du-node -c "$work/agent.conf" --interval 1 --dump-file "$work/dump.jsonl"
sleep 21
t_down=$(date +%s)
renderers=$(pgrep -P "$ERGD_PID" || true)
if [ "$MODE" = kill ]; then
  kill -STOP "$ERGD_PID"
  sleep 2
  kill -9 "$ERGD_PID"
else
  kill "$ERGD_PID"
fi
wait "$ERGD_PID" 2>/dev/null || true
sleep 4
# A render process of the killed ergd (web/render_proc.c: it gets no
# descriptor but 0-2 and dies with ergd) must not hold its listening
# sockets.
alive=$(for p in $renderers; do kill -0 "$p" 2>/dev/null && echo "$p"; done; true)
if ss -Htln "( sport = :$ZP or sport = :$HP )" | grep -q .; then
  echo "FAIL: ergd's ports still taken after it died (render child: ${alive:-none})"
  ss -Htlnp "( sport = :$ZP or sport = :$HP )"; exit 1
fi
[ -z "$alive" ] || echo "render child $alive outlived ergd without its sockets"
t_up=$(date +%s)
erg_start_ergd "$work/ergd2.log"
sleep 40
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
t_stop=$(date +%s)
kill "$ERGD_PID"
wait "$ERGD_PID" || { echo "FAIL: ergd exited with $?"; tail "$work/ergd2.log"; exit 1; }
if command -v promtool >/dev/null; then
  promtool check metrics <"$work/metrics.txt" >"$work/promtool.txt" 2>&1 ||
    { echo "FAIL: promtool"; cat "$work/promtool.txt"; exit 1; }
fi

node=$work/data/nodes/du-node
rrdtool fetch "$node/node.rrd" AVERAGE -r 5 -s $((t_down - 60)) -e "$t_stop" >"$work/node.txt"
while IFS=$'\t' read -r safe key; do
  [ -f "$node/command/$safe.rrd" ] &&
    { echo "== $key"; rrdtool fetch "$node/command/$safe.rrd" AVERAGE -r 5 -s $((t_down - 60)) -e "$t_stop"; }
done <"$node/command/index.tsv" >"$work/command.txt"

python3 - "$work" "$t_down" "$t_up" "$t_stop" "$MODE" <<'PY'
import bisect, glob, json, math, sys
work, t_down, t_up, t_stop, mode = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
STEP = 5

def metric(name):
    for l in open(f"{work}/metrics.txt"):
        if l.startswith(name + "{") or l.startswith(name + " "):
            return float(l.split()[-1])
    return None

samples = [json.loads(l) for l in open(f"{work}/dump.jsonl")]
samples = [s for s in samples if s.get("type") == "sample"]
first = min(s["realtime_start_ns"] for s in samples) / 1e9
# Cells wholly sampled by the agent and finalised before the stop.
lo = (int(first) // STEP + 1) * STEP
hi = t_stop - 3 * STEP - 2
cells = list(range(lo, hi - STEP + 1, STEP))
assert t_down - 10 > lo and t_up + 10 < hi, (lo, t_down, t_up, hi)
# The CPU time the agent sent, per cell, as the grid spreads it.
want_cpu = {t: 0.0 for t in cells}
for s in samples:
    a, b = s["realtime_start_ns"] / 1e9, s["realtime_end_ns"] / 1e9
    busy = s["totals"]["cpu_busy_ns"] / 1e9
    for t in cells:
        ov = min(b, t + STEP) - max(a, t)
        if ov > 0:
            want_cpu[t] += busy * ov / (b - a)

rows = {}
for f in sorted(glob.glob(f"{work}/data/journal/du-node.csv*")):
    for line in open(f):
        if line[0].isdigit():
            t, step, w, flags, cpu = line.strip().split(",")[:5]
            assert int(t) not in rows, f"cell {t} journalled twice"
            rows[int(t)] = (float(w), int(flags), float(cpu))
order = list(rows)
assert order == sorted(order), "journal out of order"

truth = [l.strip().split(",") for l in open(f"{work}/truth.csv") if l[0].isdigit()]
truth = [(float(t), float(e), float(w)) for t, n, _, _, w, e in truth if n == "du-node"]
tt = [r[0] for r in truth]
def energy(t):
    k = bisect.bisect_right(tt, t) - 1
    return truth[k][1] + truth[k][2] * (t - truth[k][0])

def fetch(path):
    out, key, cur = {}, None, None
    for l in open(path, errors="replace"):
        if l.startswith("== "):
            key = l[3:].strip(); out[key] = cur = {}
            continue
        if ":" not in l or not l.split(":")[0].strip().isdigit():
            continue
        t, vals = l.split(":", 1)
        vals = [float(v) for v in vals.split()]
        if key is None:
            out[int(t) - STEP] = vals
        else:
            cur[int(t) - STEP] = vals[0]
    return out
node = fetch(f"{work}/node.txt")
keys = fetch(f"{work}/command.txt")

bad, outage_got, outage_want = [], 0.0, 0.0
for t in cells:
    if t not in rows:
        bad.append(f"{t}: not journalled"); continue
    w, flags, cpu = rows[t]
    if flags & 3:
        bad.append(f"{t}: flags {flags} (1 no meter, 2 no agent)"); continue
    if abs(cpu * STEP - want_cpu[t]) > 0.02 + 0.01 * want_cpu[t]:
        bad.append(f"{t}: CPU {cpu * STEP:.3f} s, the agent sent {want_cpu[t]:.3f} s")
    meas, _, idle, dyn, unattr, est = node.get(t, [math.nan] * 6)
    if math.isnan(meas) or est != 0:
        bad.append(f"{t}: node.rrd measured {meas} estimated {est}"); continue
    tw = (energy(t + STEP) - energy(t)) / STEP
    # Cells across the outage have the counter's mean over the gap.
    if t + STEP > t_down - 1 and t < t_up + 3:
        outage_got += meas * STEP; outage_want += tw * STEP
        tol = 0.25 * tw
    else:
        tol = max(3.0, 0.03 * tw)
    if abs(meas - tw) > tol:
        bad.append(f"{t}: measured {meas:.1f} W, truth {tw:.1f} W")
    if abs(idle + dyn - meas) > 0.01 or abs(unattr) > 1e-9:
        bad.append(f"{t}: idle {idle} + dynamic {dyn} != measured {meas} (unattributed {unattr})")
    ksum = sum(v.get(t, math.nan) for v in keys.values() if not math.isnan(v.get(t, math.nan)))
    if abs(ksum - dyn) > 0.01 + 1e-4 * dyn:
        bad.append(f"{t}: command keys sum {ksum:.3f} W, dynamic {dyn:.3f} W")
assert not bad, f"{len(bad)} of {len(cells)} cells wrong:\n" + "\n".join(bad)
assert outage_want > 0 and abs(outage_got - outage_want) <= 0.02 * outage_want, \
    f"energy over the outage {outage_got:.0f} J, truth {outage_want:.0f} J"
assert metric("erg_agent_overlapping_samples_total") == 0, "resent samples taken for a duplicate agent"
replayed = metric('erg_wal_records_total{result="replayed"}')
torn = metric('erg_wal_records_total{result="torn"}')
print(f"ok ({mode}): {len(cells)} cells {lo}..{hi} all present, CPU = the agent's, power = "
      f"truth; outage energy {outage_got:.0f} J vs {outage_want:.0f} J; WAL replayed {replayed}, "
      f"torn {torn}; resent duplicates {metric('erg_samples_resent_duplicate_total')}")
PY
