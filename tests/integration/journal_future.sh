#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A journal row dated a day ahead (a clock that was set wrong, a damaged or
# forged file; issue 23): ergd used to resume after it at start and then
# wrote no row, no archive update and dropped every sample as late for a
# day, saying nothing. Now it resumes after the last row before now + 10
# minutes, says so once, counts it (erg_journal_future_total) and journals
# the node's cells in a new file.
set -euo pipefail
PDUSIM=$1 ERGD=$2
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit 77; }
erg_setup journal_future
erg_ports
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
$(erg_sim_meter)
[node.n1]
power = sim:1
CONF
mkdir -p "$work/data/journal"
now=$(date +%s)
t0=$((now - 60 - now % 2)) future=$((now + 86400 - now % 2))
printf '# erg-journal v1 node=n1 step_seconds=2\ntime_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second,ncpu\n%s,2,100.000,1,0.000000,0\n%s,2,100.000,1,0.000000,0\n' \
  "$t0" "$future" >"$work/data/journal/n1.csv"
erg_start_pdusim --node n1 --idle 80 --update 0.5
erg_start_ergd
sleep 9
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
kill "$ERGD_PID"; wait "$ERGD_PID" || true
n=$(grep -c "node n1: journal rows up to $((future + 2)) lie .* s in the future: ignored" "$work/ergd.log" || true)
[ "$n" = 1 ] || { echo "FAIL: said $n times, not once"; cat "$work/ergd.log"; exit 1; }
grep -q '^erg_journal_future_total 1$' "$work/metrics.txt" ||
  { echo "FAIL: not counted"; grep erg_journal_future "$work/metrics.txt"; exit 1; }
# The cells of this run: in a new file, after the start, measured.
rows=$(awk -F, -v s="$now" '$1 ~ /^[0-9]+$/ && $1 >= s && $1 < s + 3600 && $4 % 2 == 0' \
  "$work/data/journal/n1.csv" | wc -l)
[ "$rows" -ge 2 ] || { echo "FAIL: $rows measured rows after the start"; cat "$work/data/journal/n1.csv"; cat "$work/ergd.log"; exit 1; }
grep -q "^$future," "$work/data/journal/n1.csv.1" || { echo "FAIL: old file not rotated"; exit 1; }
echo "ok: resumed before the row a day ahead, said once, counted; $rows new rows"
