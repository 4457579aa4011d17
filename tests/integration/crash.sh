#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Crashes: ergd journals a cell at once but stores it through a writer
# thread (here, through rrdcached holding updates for an hour), so after a
# SIGKILL the store can lack cells the journal has. ergd must resume after
# the journal's last row: every cell journalled once, and the journal's
# energy that of erg-pdusim's truth, not more. Phases:
#   1. the node's agent restarts (new pid, same boot id): its samples are
#      taken, not refused as a duplicate agent's, and the node's CPU time
#      over the restart is /proc/stat's, not more;
#   2. kill -9 of ergd alone, restarted at once;
#   3. kill -9 of ergd and rrdcached together (a host crash: the store loses
#      every cached update, the journal is on disk), both restarted.
# usage: crash.sh PDUSIM ERGD AGENT
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
for t in curl python3 rrdcached; do command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }; done
unset RRDCACHED_ADDRESS
erg_setup crash
erg_ports
sock="unix:$work/rrdcached.sock"
mkdir -p "$work/data"
start_rrdcached() {
  rrdcached -g -l "$sock" -b "$work/data" -B -w 3600 -f 7200 -p "$work/rrdcached.pid" \
    >>"$work/rrdcached.log" 2>&1 &
  RRDC_PID=$!
  pids+=($RRDC_PID)
  for _ in $(seq 1 50); do [ -S "$work/rrdcached.sock" ] && return 0; sleep 0.1; done
  echo "FAIL: rrdcached did not start"; exit 1
}
# Busy CPU seconds of the machine, as the agent counts them.
busy_seconds() {
  awk '/^cpu / { print ($2 + $3 + $4 + $7 + $8 + $9) / 100; exit }' /proc/stat
}
# Sleeps until just after the next multiple of 5 s (a cell border) and
# prints "BORDER BUSY LATE": the border, the busy seconds read at once on
# waking, and how late that read was. One process, so a loaded machine
# cannot put seconds between the border and the reading: stamping the
# window with `date` after the sleep once took a time 2 s past the border
# (a fork and exec under load), and the window then ran between cells.
to_border() {
  python3 - <<'PY'
import math, time
now = time.time()
border = math.floor(now / 5) * 5 + 5
time.sleep(border + 0.01 - now)
with open("/proc/stat") as f:
    v = f.readline().split()
late = time.time() - border
busy = sum(int(v[i]) for i in (1, 2, 3, 6, 7, 8)) / 100
print(border, busy, f"{late:.3f}")
PY
}
start_rrdcached
erg_ergd_conf <<CONF
rrdcached = $sock
settle_steps = 1
poll_seconds = 0.5
lag_max_seconds = 0
$(erg_sim_meter)
[node.cr-node]
power = sim
idle_watts = 40
CONF
erg_start_pdusim --node cr-node --idle 100 --slope 0 --update 0.5 --truth "$work/truth.csv"
erg_start_ergd "$work/ergd1.log"
erg_start_agent cr-node --interval 1
agent=${pids[-1]}
sleep 10

# 1. The agent restarts between two cell borders. A busy process keeps the
# window's CPU time well above the agent's own start-up (loading its BPF
# programs, before its first baseline, is nobody's): on an idle machine the
# window held 0.34 s of busy time and that start-up alone put the ratio
# under its bound.
cp "$(command -v sha256sum)" "$work/crburn$$"
"$work/crburn$$" /dev/zero &
burner=$!
pids+=($burner)
read -r t_a cpu_a late_a < <(to_border)
sleep 7
kill "$agent"; wait "$agent" 2>/dev/null || true
# The restart's gap (nobody's CPU time: the old agent gone, the new one
# loading its BPF programs before its first baseline) lasts until ergd
# takes the new agent's first sample; on a machine busy with other tests it
# is seconds of everybody's CPU, so it is measured, not assumed small.
ok_count() { curl -sf "http://127.0.0.1:$HP/metrics" |
  awk '/^erg_agent_messages_total\{result="ok"\}/ { print $2 }'; }
cpu_k=$(busy_seconds) ok0=$(ok_count)
erg_start_agent cr-node --interval 1
for _ in $(seq 1 150); do [ "$(ok_count)" -gt "$ok0" ] && break; sleep 0.1; done
cpu_s=$(busy_seconds)
sleep 7
read -r t_b cpu_b late_b < <(to_border)
kill $burner
sleep 8
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics1.txt"
overlap=$(awk '/^erg_agent_overlapping_samples_total\{node="cr-node"\}/ {print $2}' "$work/metrics1.txt")
[ "${overlap:-0}" = 0 ] || { echo "FAIL: the restarted agent's samples were refused ($overlap)"; exit 1; }

# 2. kill -9 of ergd mid-stream, restarted at once.
kill -9 "$ERGD_PID"; wait "$ERGD_PID" 2>/dev/null || true
erg_start_ergd "$work/ergd2.log"
sleep 12

# 3. A host crash: ergd and rrdcached killed together, the cached updates lost.
kill -9 "$ERGD_PID" "$RRDC_PID"; wait "$ERGD_PID" "$RRDC_PID" 2>/dev/null || true
rm -f "$work/rrdcached.sock" "$work/rrdcached.pid"
start_rrdcached
erg_start_ergd "$work/ergd3.log"
sleep 20
kill "$ERGD_PID"; wait "$ERGD_PID" || true

python3 - "$work" "$cpu_a" "$t_a" "$cpu_b" "$t_b" "$cpu_k" "$cpu_s" "$late_a" "$late_b" <<'PY'
import bisect, glob, os, sys
work = sys.argv[1]
cpu_a, t_a, cpu_b, t_b = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
cpu_k, cpu_s = float(sys.argv[6]), float(sys.argv[7])
late_a, late_b = float(sys.argv[8]), float(sys.argv[9])
rows = []
for f in sorted(glob.glob(f"{work}/data/journal/cr-node.csv*")):
    for line in open(f):
        if line[0].isdigit():
            t, step, w, flags, cpu = line.strip().split(",")[:5]
            rows.append((int(t), int(step), float(w), int(flags), float(cpu)))
times = [r[0] for r in rows]
dups = sorted({t for t in times if times.count(t) > 1})
assert not dups, f"{len(dups)} cell(s) journalled twice: {dups[:10]}"
assert times == sorted(times), "journal rows out of order"

# Energy: every journalled cell's joules against the simulator's, whose
# meter holds each shown power until its next update.
truth = [(float(t), float(e), float(w)) for t, _, _, _, w, e in
         (l.strip().split(",") for l in open(f"{work}/truth.csv") if l[0].isdigit())]
tt = [r[0] for r in truth]
def energy(t):
    k = bisect.bisect_right(tt, t) - 1
    assert 0 <= k < len(truth) - 1, f"{t} outside the truth log"
    return truth[k][1] + truth[k][2] * (t - truth[k][0])
measured = [r for r in rows if not r[3] & 1 and tt[0] <= r[0] and r[0] + r[1] < tt[-1]]
assert len(measured) >= 6, f"only {len(measured)} measured cells"
got = sum(r[2] * r[1] for r in measured)
want = sum(energy(r[0] + r[1]) - energy(r[0]) for r in measured)
assert abs(got - want) <= 0.02 * want, f"journal energy {got:.0f} J, truth {want:.0f} J"

# CPU over the agent restart: the cells [t_a, t_b) hold /proc/stat's busy
# time, less the restart's gap, never more.
ncpu = os.cpu_count()
assert max(r[4] for r in rows) <= ncpu + 0.05, max(r[4] for r in rows)
win = [r for r in rows if t_a <= r[0] and r[0] + r[1] <= t_b]
assert len(win) == (t_b - t_a) // 5, f"cells over the agent restart: {win}"
jcpu = sum(r[4] * r[1] for r in win)
# Never more than /proc/stat's; at least 0.8 of it less the gap (an upper
# bound of the unseen: it also holds part of the first sample's interval).
# The readings came late_a, late_b s after the borders: at most ncpu x
# that of CPU time is in one and not the other.
gap = cpu_s - cpu_k
slack = ncpu * (late_a + late_b)
assert jcpu <= 1.03 * (cpu_b - cpu_a) + slack, \
    f"journal CPU {jcpu:.2f} s vs /proc/stat {cpu_b - cpu_a:.2f} s (+{slack:.2f} s)"
assert jcpu >= 0.8 * (cpu_b - cpu_a - gap) - slack, \
    f"journal CPU {jcpu:.2f} s vs /proc/stat {cpu_b - cpu_a:.2f} s less the restart's gap {gap:.2f} s"
print(f"ok: {len(rows)} cells once each; energy {got:.0f} J vs truth {want:.0f} J; "
      f"CPU over the agent restart {jcpu:.2f} s vs {cpu_b - cpu_a:.2f} s (gap {gap:.2f} s, "
      f"read {late_a:.3f} s and {late_b:.3f} s after the borders)")
PY
