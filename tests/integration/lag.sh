#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Lag estimation end to end: erg-pdusim delays power by 3 s; with a bursty
# load, ergd must estimate the lag within one meter update period (1 s).
# Then ergd is restarted (SIGTERM): the lag it kept (JOURNAL_DIR/NODE.lag)
# must be in use from the first cell, before this run could estimate it,
# and those cells must not be flagged for the fit.
# The node is a cgroup2 group (erg-pdusim --node NAME=CGROUP, erg-agent
# --scope): the meter and the agent see only the test's bursts, so other
# tests may run beside it.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit 77; }
erg_cgroup2
tag=erg-lag-$$
erg_setup lag
ERG_CLEANUP='kill $(jobs -p) 2>/dev/null || true; erg_cg_remove $tag'
mkdir "$CG2/$tag" 2>/dev/null || { echo "SKIP: cannot create cgroup $CG2/$tag"; exit 77; }
erg_ports
erg_ergd_conf <<CONF
poll_seconds = 0.5
lag_window_seconds = 45
$(erg_sim_meter)
[node.lag-node]
power = sim
CONF
erg_start_pdusim --node lag-node=$SIMPREFIX/$tag --update 1 --lag 3 --idle 50 --slope 150
erg_start_ergd
erg_start_agent lag-node --scope /$tag --interval 0.5
# Bursts of 1 or 2 busy processes, 2..6 s on, 4..9 s from one start to
# the next, for SECONDS (the last may run past it).
bursts() { # seconds
  local until=$((SECONDS + $1))
  while [ $SECONDS -lt $until ]; do
    for _ in $(seq 1 $((1 + RANDOM % 2))); do erg_in_cg $tag timeout $((2 + RANDOM % 5)) sha256sum /dev/zero & done
    sleep $((4 + RANDOM % 6))
  done
}
RANDOM=7
bursts 60
# Then on until the first estimate (it needs 30 s of paired data, later
# on a loaded machine) and 16 s beyond it, so the journal holds cells
# aligned after it: those must not be flagged.
for _ in $(seq 1 8); do grep -q "lags activity by" "$work/ergd.log" && break; bursts 5; done
# An early estimate may still be replaced by a distant lag (a 0.15 better
# r), which flags the cells around the change: then on until no change
# came for 40 s, so the last cells are aligned after it (CI failed twice
# on such a change in the test's last 16 s).
changes() { grep -c "meter lag now" "$work/ergd.log" || true; }
seen=0
bursts 16
for _ in 1 2 3; do
  now=$(changes)
  [ "$now" = "$seen" ] && break
  seen=$now
  bursts 40
done
sleep 2
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
lag=$(awk '/^erg_node_lag_seconds\{node="lag-node"\}/ {print $2}' "$work/metrics.txt")
r=$(awk '/^erg_node_lag_correlation\{node="lag-node"\}/ {print $2}' "$work/metrics.txt")
[ -n "$lag" ] || { echo "FAIL: no lag estimate"; grep -i lag "$work/ergd.log"; exit 1; }
python3 -c "import sys; sys.exit(0 if abs($lag - 3) <= 1 else 1)" ||
  { echo "FAIL: lag estimated $lag s (r=$r), simulator lag 3 s"; exit 1; }
grep -q "lags activity by" "$work/ergd.log"
# Issue 14: cells aligned before the first confident estimate are flagged
# 16 in the journal (the fit skips them); cells well after it are not.
conf=$(awk '/^erg_node_lag_confidence\{node="lag-node"\}/ {print $2}' "$work/metrics.txt")
unsure=$(awk '/^erg_node_lag_unsure_cells_total\{node="lag-node"\}/ {print $2}' "$work/metrics.txt")
[ -n "$conf" ] && [ "${unsure:-0}" -gt 0 ] ||
  { echo "FAIL: lag confidence '$conf', unsure cells '$unsure' in /metrics"; exit 1; }
python3 - "$work/data/journal/lag-node.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#"))][1:]
flags = [int(r[3]) for r in rows]
first_ok = next((i for i, f in enumerate(flags) if not f & 16), None)
assert flags and flags[0] & 16, f"first cell not flagged 16: {flags[:5]}"
assert first_ok is not None, "every cell flagged 16"
late = flags[first_ok:]
assert sum(f & 16 != 0 for f in late[-4:]) == 0, f"last cells flagged: {flags}"
print(f"journal: {first_ok} cell(s) before the estimate flagged 16, "
      f"{sum(f & 16 != 0 for f in late)} of {len(late)} later ones")
PY

# ---- restart: the kept lag aligns from the first cell ----
lagfile=$work/data/journal/lag-node.lag
grep -Eq '^erg-meter-lag 1 lag_seconds=[2-4] ' "$lagfile" ||
  { echo "FAIL: lag not kept in $lagfile: $(cat "$lagfile" 2>&1)"; exit 1; }
kill -TERM "$ERGD_PID"; wait "$ERGD_PID" || true
restart=$(date +%s)
erg_start_ergd "$work/ergd2.log"
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics2.txt"
lag2=$(awk '/^erg_node_lag_seconds\{node="lag-node"\}/ {print $2}' "$work/metrics2.txt")
[ "$lag2" = "$lag" ] || { echo "FAIL: restarted ergd's lag '$lag2', kept $lag"; exit 1; }
grep -q "lags activity by .* (from the last run)" "$work/ergd2.log" ||
  { echo "FAIL: restart did not say it uses the kept lag"; cat "$work/ergd2.log"; exit 1; }
# 16 s of load, then until 4 cells from the restart on are journalled
# (their settle delay, 15 s + the lag: waited for, not slept). A fresh
# estimate needs 30 paired seconds and a 10-s tick, so these cells are
# aligned by the kept lag alone: without it they would be flagged 16, as
# the first run's first cells are. (Should a fresh estimate come all the
# same, it confirmed the kept lag or took its neighbour, nothing flagged:
# the meter updates once a second, so the true lag lies between two
# seconds; or replaced it by a distant one, said in the log, and then the
# cells before it are flagged.)
bursts 16
cells_since() { awk -F, -v t="$1" '/^[0-9]/ && $1 >= t { n++ } END { print n + 0 }' "$work/data/journal/lag-node.csv"; }
for _ in $(seq 1 120); do
  [ "$(cells_since "$restart")" -ge 4 ] && break
  sleep 0.5
done
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics3.txt"
python3 - "$work/data/journal/lag-node.csv" "$restart" "$work/ergd2.log" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#"))][1:]
after = [(int(float(r[0])), int(r[3])) for r in rows if int(float(r[0])) >= int(sys.argv[2])]
assert len(after) >= 3, f"only {len(after)} cells journalled after the restart"
log = open(sys.argv[3]).read()
# Replaced by a fresh estimate that is no neighbour of the kept one (not
# expected: the meter's lag did not change): then they may be flagged.
# A later change to a distant lag flags the cells around it, as in a first
# run (not expected either).
if "cells since the start are flagged" not in log and "cells around the change" not in log:
    flagged = [t for t, f in after if f & 16]
    assert not flagged, f"cells after the restart flagged 16 (lag unsure): {flagged} of {after}"
print(f"restart: {len(after)} cells journalled after it, {sum(f & 16 != 0 for _, f in after)} flagged 16")
PY
unsure3=$(awk '/^erg_node_lag_unsure_cells_total\{node="lag-node"\}/ {print $2}' "$work/metrics3.txt")
[ "${unsure3:-0}" = 0 ] || grep -q "cells since the start are flagged\|cells around the change" "$work/ergd2.log" || { echo "FAIL: $unsure3 cell(s) flagged unsure after the restart"; exit 1; }
echo "ok: lag $lag s (r=$r, margin $conf), $unsure cell(s) flagged unsure; kept across a restart"
