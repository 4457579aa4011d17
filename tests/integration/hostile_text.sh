#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Names that are no UTF-8 or look like formulas reach every output valid
# (issue 23): two processes named "bad\xff\xfe\xc3(x" and "=1+1" (the
# burner sets its comm) and a node named "n\xff\xfe\xc3(" send through
# ergd; /metrics passes promtool check metrics and a strict UTF-8 decode,
# as do erg report's CSV and HTML and the pages; the CSV cell of "=1+1" is
# neutralised ("'=1+1"); the agent's hostile hello is one log line.
set -euo pipefail
ERG=$1 PDUSIM=$2 ERGD=$3 AGENT=$4 BURNER=$5
. "$(dirname "$0")/lib.sh"
erg_need curl python3 promtool
erg_setup hostile_text
erg_ports
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
page_interval_seconds = 2
lag_max_seconds = 0
$(erg_sim_meter)
[node.h8]
power = sim
idle_watts = 40
CONF
erg_start_pdusim --node h8 --idle 40 --slope 100 --update 0.5
erg_start_ergd
erg_start_agent h8 --interval 0.5
bad=$'n\xff\xfe\xc3(\nforged line'
"$AGENT" --node "$bad" --collector "tcp://127.0.0.1:$ZP" --interval 0.5 2>"$work/agent-bad.log" &
pids+=($!)
"$BURNER" 60 250 $'bad\xff\xfe\xc3(x' 1 >/dev/null & pids+=($!)
"$BURNER" 60 250 '=1+1' 1 >/dev/null & pids+=($!)
fail() { echo "FAIL: $*"; exit 1; }
strict() { python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8", "strict")' <"$1" ||
             fail "$1 is not valid UTF-8"; }
m=$work/metrics.txt
for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$HP/metrics" >"$m"
  grep -q 'key="bad???(x"' "$m" && grep -q 'key="=1+1"' "$m" && break
  sleep 0.5
done
grep -q 'erg_key_energy_joules_total{node="h8",kind="command",key="bad???(x"}' "$m" ||
  fail "hostile process name not in /metrics as bad???(x"
grep -q 'node="n???(\\nforged line"' "$m" || fail "hostile node name not in /metrics"
promtool check metrics <"$m" || fail "promtool check metrics"
strict "$m"
data=$work/data
"$ERG" report --data-dir "$data" --from -10m --by command --format csv >"$work/r.csv"
"$ERG" report --data-dir "$data" --from -10m --by command --format html >"$work/r.html"
strict "$work/r.csv"
strict "$work/r.html"
grep -q '"h8","bad???(x"' "$work/r.csv" || { cat "$work/r.csv"; fail "CSV lacks bad???(x"; }
grep -q "\"h8\",\"'=1+1\"" "$work/r.csv" || { cat "$work/r.csv"; fail "=1+1 not neutralised"; }
if grep -q '"=1+1"' "$work/r.csv"; then fail "a formula cell in the CSV"; fi
for _ in $(seq 1 40); do ls "$data/www"/node-hour-*.html >/dev/null 2>&1 && break; sleep 0.5; done
n=0
for f in "$data/www"/*.html; do [ -e "$f" ] && { strict "$f"; n=$((n + 1)); }; done
[ "$n" -ge 2 ] || fail "only $n pages rendered"
# The hostile hello: one escaped line, no forged one.
grep -q 'agent hello: node n\\xff\\xfe\\xc3(\\nforged line, version' "$work/ergd.log" ||
  { cat "$work/ergd.log"; fail "hostile node name not escaped in the log"; }
if grep -q '^forged line' "$work/ergd.log"; then fail "a forged log line"; fi
strict "$work/ergd.log"
echo "ok: /metrics passes promtool, report CSV/HTML and $n pages are UTF-8, =1+1 neutralised, log escaped"
