#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A real Prometheus scrapes ergd's /metrics: the target is up and erg's
# series are queryable with the values ergd serves, including the energy
# counters of the node (measured, idle, dynamic) and of its profile keys
# (every kind; with a simulated meter so cells are attributed).
set -euo pipefail
ERGD=$1 AGENT=$2 PDUSIM=$3
. "$(dirname "$0")/lib.sh"
for t in prometheus promtool curl python3; do
  command -v $t >/dev/null || { echo "SKIP: $t missing (Debian prometheus)"; exit 77; }
done
erg_setup prom
erg_ports
PP=$(free_port)
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
$(erg_sim_meter)
[node.prom-node]
power = sim
idle_watts = 40
CONF
cat >"$work/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: ergd
    static_configs:
      - targets: ['127.0.0.1:$HP']
CONF
promtool check config "$work/prometheus.yml" >/dev/null
erg_start_pdusim --node prom-node --idle 40 --slope 100 --update 0.5
erg_start_ergd
erg_start_agent prom-node --interval 0.5
erg_start_prometheus || exit 1
q() { curl -sf "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1"; }
for _ in $(seq 1 40); do
  up=$(q 'up{job="ergd"}' | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")')
  seen=$(q 'erg_agent_last_seen_timestamp_seconds{node="prom-node"}' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))')
  [ "$up" = 1 ] && [ "$seen" = 1 ] && break
  sleep 0.5
done
[ "$up" = 1 ] || { echo "FAIL: target not up"; tail "$work/prom.log"; exit 1; }
[ "$seen" = 1 ] || { echo "FAIL: erg series not in Prometheus"; exit 1; }
ok=$(q 'erg_agent_messages_total{result="ok"}' | python3 -c 'import json,sys; print(float(json.load(sys.stdin)["data"]["result"][0]["value"][1]))')
python3 -c "import sys; v=float('$ok'); sys.exit(0 if v >= 1 else 1)" ||
  { echo "FAIL: messages counter $ok"; exit 1; }
# Energy counters: every kind of key is there, and what Prometheus stored
# adds up per kind to the node's dynamic energy (same scrape, same cells).
val() { python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "nan")'; }
for _ in $(seq 1 40); do
  kinds=$(q 'count(count by (kind) (erg_key_energy_joules_total{node="prom-node"}))' | val)
  dyn=$(q 'erg_node_dynamic_energy_joules_total{node="prom-node"}' | val)
  [ "$kinds" = 5 ] && python3 -c "import sys; sys.exit(0 if float('$dyn') > 0 else 1)" && break
  sleep 0.5
done
[ "$kinds" = 5 ] || { echo "FAIL: key energy kinds in Prometheus: $kinds"; exit 1; }
python3 -c "import sys; sys.exit(0 if float('$dyn') > 0 else 1)" ||
  { echo "FAIL: erg_node_dynamic_energy_joules_total $dyn"; exit 1; }
for kind in command job unit container user; do
  both=$(q "sum(erg_key_energy_joules_total{node=\"prom-node\",kind=\"$kind\"}) - on() erg_node_dynamic_energy_joules_total{node=\"prom-node\"}" | val)
  python3 -c "import sys; sys.exit(0 if abs(float('$both')) < 0.01 * max(1, float('$dyn')) else 1)" ||
    { echo "FAIL: kind $kind: keys minus dynamic energy = $both J (dynamic $dyn J)"; exit 1; }
done
for m in erg_node_measured_energy_joules_total erg_node_idle_energy_joules_total \
         erg_node_no_agent_energy_joules_total; do
  [ "$(q "$m{node=\"prom-node\"}" | val)" != nan ] || { echo "FAIL: $m not scraped"; exit 1; }
done
# The dynamic energy's 95 % interval (docs/model.md, "Uncertainty"): a
# half-width beside it, > 0 (no model here: the idle guessed to 20 %, which
# may be wider than a light load's dynamic energy).
half=$(q 'erg_node_dynamic_energy_uncertainty_joules{node="prom-node"}' | val)
python3 -c "import math, sys; h = float('$half'); sys.exit(0 if math.isfinite(h) and h > 0 else 1)" ||
  { echo "FAIL: erg_node_dynamic_energy_uncertainty_joules $half (dynamic $dyn J)"; exit 1; }
# The deprecated name is the same counter (docs/report.md).
same=$(q 'erg_node_no_agent_energy_joules_total{node="prom-node"} - on() erg_node_unattributed_energy_joules_total{node="prom-node"}' | val)
[ "$same" = 0 ] || { echo "FAIL: no_agent minus its deprecated name = $same"; exit 1; }
curl -sf "http://127.0.0.1:$HP/metrics" | promtool check metrics
echo "ok: scraped, erg_agent_messages_total=$ok, dynamic energy $dyn J (+- $half J) = sum of keys for every kind"
