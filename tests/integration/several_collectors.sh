#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Several collectors (docs/scale.md "Several collectors"): two ergd, one per
# row (row-a: node a1, row-b: node b1, each with its own simulated meter
# unit and agent), scraped by one real Prometheus that loads the shipped
# recording rules (docs/prometheus/erg-cluster-rules.yml, checked with
# promtool). Once both rows' counters stand still (meters and agents
# stopped), the cluster series Prometheus computes must equal the sum of
# what the two ergd serve on /metrics. Then `erg report` over both data
# dirs has the nodes of both rows, and the same store given twice is
# refused.
# usage: several_collectors.sh PDUSIM ERGD AGENT ERG RULES
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3 ERG=$4 RULES=$5
. "$(dirname "$0")/lib.sh"
erg_need prometheus promtool curl python3 ss
erg_setup several
MB=$(free_port) PP=$(free_port)
promtool check rules "$RULES" >/dev/null
erg_start_pdusim --node a1 --node b1 --idle 40 --slope 100 --update 0.5
# One ergd per row: its own ports, data dir, meter unit and node.
declare -A HPS
for row in a b; do
  erg_instance $row
  HPS[$row]=$HP
  unit=$([ $row = a ] && echo 1 || echo 2)
  erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
$(erg_sim_meter $unit)
[node.${row}1]
power = sim
idle_watts = 40
CONF
  erg_start_ergd
  erg_start_agent "${row}1" --interval 0.5
  eval "AGENT_PID_$row=$!"
done
cp "$RULES" "$work/rules.yml"
cat >"$work/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ['$work/rules.yml']
scrape_configs:
  - job_name: ergd
    static_configs:
      - targets: ['127.0.0.1:${HPS[a]}']
        labels: {row: a}
      - targets: ['127.0.0.1:${HPS[b]}']
        labels: {row: b}
CONF
promtool check config "$work/prometheus.yml" >/dev/null
erg_start_prometheus || exit 1
q() { curl -sf "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "nan")'; }
# Both rows measured energy (attributed cells) before the counters freeze.
for _ in $(seq 1 60); do
  ea=$(q 'erg_node_measured_energy_joules_total{row="a",node="a1"}')
  eb=$(q 'erg_node_measured_energy_joules_total{row="b",node="b1"}')
  python3 -c "import sys; sys.exit(0 if float('$ea') > 0 and float('$eb') > 0 else 1)" && break
  sleep 0.5
done
python3 -c "import sys; sys.exit(0 if float('$ea') > 0 and float('$eb') > 0 else 1)" ||
  { echo "FAIL: measured energy per row in Prometheus: a=$ea b=$eb"; tail -5 "$work"/*/ergd.log; exit 1; }
# Freeze: no meter, no agent -> no cell adds energy or messages any more.
# shellcheck disable=SC2154
kill "$AGENT_PID_a" "$AGENT_PID_b"
kill "${pids[0]}" # erg-pdusim
sleep 8           # the last cells settle (2 s step, 1 settle step) and ergd notices
metrics_sum() { # NAME: the sum of NAME over both ergd's own /metrics
  for row in a b; do curl -sf "http://127.0.0.1:${HPS[$row]}/metrics"; done |
    awk -v m="$1" 'index($1, m) == 1 && (length($1) == length(m) || substr($1, length(m) + 1, 1) == "{") \
      { s += $2 } END { printf "%.17g", s }'
}
stable=0
for _ in $(seq 1 30); do
  e1=$(metrics_sum erg_node_measured_energy_joules_total)
  sleep 3 # 3 scrapes and rule evaluations
  e2=$(metrics_sum erg_node_measured_energy_joules_total)
  [ "$e1" = "$e2" ] && { stable=1; break; }
done
[ "$stable" = 1 ] || { echo "FAIL: energy counters still moving ($e1 -> $e2)"; exit 1; }
fails=0
check() { # RULE METRIC: the rule's value equals the sum over both /metrics
  local got want
  got=$(q "$1") want=$(metrics_sum "$2")
  if python3 -c "import sys; g, w = float('$got'), float('$want'); sys.exit(0 if w > 0 and abs(g - w) <= 1e-9 * w else 1)"; then
    echo "ok: $1 = $got = sum of $2 over both ergd"
  else
    echo "FAIL: $1 = $got, sum of $2 over both ergd /metrics = $want"; fails=1
  fi
}
check 'erg:node_measured_energy_joules:sum' erg_node_measured_energy_joules_total
check 'erg:node_idle_energy_joules:sum' erg_node_idle_energy_joules_total
check 'erg:node_dynamic_energy_joules:sum' erg_node_dynamic_energy_joules_total
check 'erg:agent_messages:sum' erg_agent_messages_total
rows=$(curl -sf "http://127.0.0.1:$PP/api/v1/query" --data-urlencode \
  'query=erg:node_measured_energy_joules:sum_by_row' |
  python3 -c 'import json,sys; print(" ".join(sorted(r["metric"]["row"] for r in json.load(sys.stdin)["data"]["result"])))')
[ "$rows" = "a b" ] || { echo "FAIL: per-row sums for rows '$rows'"; fails=1; }
[ "$(q 'erg:collectors_up:sum')" = 2 ] || { echo "FAIL: erg:collectors_up:sum not 2"; fails=1; }

# erg report over both stores: the nodes of both rows, with energy.
from=$(($(date +%s) - 600))
"$ERG" report --data-dir "$work/a/data" --data-dir "$work/b/data" --from $from --to now \
  --format json >"$work/report.json" 2>"$work/report.err" || { cat "$work/report.err"; exit 1; }
python3 - "$work/report.json" <<'PY' || fails=1
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
nodes = sorted(r["node"] for r in rows)
ok = nodes == ["a1", "b1"] and all(r["energy_joules"] > 0 for r in rows)
print(("ok" if ok else "FAIL") + f": erg report over both data dirs: {[(r['node'], r['energy_joules']) for r in rows]}")
sys.exit(0 if ok else 1)
PY
if "$ERG" report --data-dir "$work/a/data" --data-dir "$work/a/data" >/dev/null 2>"$work/dup.err"; then
  echo "FAIL: a store given twice was accepted"; fails=1
elif ! grep -q "a1 is in two stores" "$work/dup.err"; then
  echo "FAIL: no clear error for a node in two stores: $(cat "$work/dup.err")"; fails=1
else
  echo "ok: $(cat "$work/dup.err")"
fi
exit $fails
