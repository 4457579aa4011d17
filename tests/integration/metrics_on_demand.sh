#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# /metrics is rendered when a scrape asks, after the inputs that came
# before it, not every second on the loop (5,000 BMC-read nodes' series
# every second cost a fifth of a core: docs/benchmarks.md "BMC polling"):
# with nobody scraping, erg_metrics_renders_total stands still; each scrape
# gets a body rendered for it (the counter one more than the last scrape
# saw); scrapes at the same moment all get an answer.
set -euo pipefail
ERGD=$1
. "$(dirname "$0")/lib.sh"
erg_need curl
erg_setup metrics-ask
erg_ports
erg_ergd_conf <<CONF
$(erg_quick_opts)
[node.n1]
CONF
erg_start_ergd
renders() { curl -sf --max-time 10 "http://127.0.0.1:$HP/metrics" | awk '$1 == "erg_metrics_renders_total" {print $2}'; }
r0=
for _ in $(seq 1 50); do r0=$(renders || true); [ -n "$r0" ] && break; sleep 0.1; done
[ -n "$r0" ] || { echo "FAIL: no erg_metrics_renders_total"; cat "$work/ergd.log"; exit 1; }
sleep 3.5 # no scrape: no render (every second, 3 or more)
r1=$(renders)
[ "$r1" = $((r0 + 1)) ] || { echo "FAIL: renders $r0, then $r1 after 3.5 s without a scrape (want $((r0 + 1)))"; exit 1; }
r2=$(renders)
[ "$r2" = $((r1 + 1)) ] || { echo "FAIL: a scrape got a body not rendered for it ($r1, then $r2)"; exit 1; }
par=()
for i in 1 2 3 4 5 6; do renders >"$work/par.$i" & par+=($!); done
wait "${par[@]}"
for i in 1 2 3 4 5 6; do
  v=$(cat "$work/par.$i")
  [ -n "$v" ] && [ "$v" -gt "$r2" ] && [ "$v" -le $((r2 + 6)) ] ||
    { echo "FAIL: parallel scrape $i: renders '$v' after $r2"; exit 1; }
done
echo "ok: renders $r0 -> $r1 after 3.5 s idle -> $r2; 6 parallel scrapes answered"
