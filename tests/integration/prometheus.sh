#!/usr/bin/env bash
# A real Prometheus scrapes ergd's /metrics: the target is up and erg's
# series are queryable with the values ergd serves.
set -euo pipefail
ERGD=$1 AGENT=$2
. "$(dirname "$0")/lib.sh"
for t in prometheus promtool curl python3; do
  command -v $t >/dev/null || { echo "SKIP: $t missing (Debian prometheus)"; exit 77; }
done
work=$(mktemp -d /tmp/erg-prom.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
ZP=$(free_port); HP=$(free_port); PP=$(free_port)
cat >"$work/ergd.conf" <<CONF
[collector]
listen = tcp://127.0.0.1:$ZP
http = 127.0.0.1:$HP
data_dir = $work/data
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
"$ERGD" -c "$work/ergd.conf" 2>"$work/ergd.log" &
pids+=($!)
wait_port "$HP"
"$AGENT" --node prom-node --collector tcp://127.0.0.1:$ZP --interval 0.5 2>/dev/null &
pids+=($!)
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address=127.0.0.1:$PP >"$work/prom.log" 2>&1 &
pids+=($!)
wait_port "$PP" 20
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
curl -sf "http://127.0.0.1:$HP/metrics" | promtool check metrics
echo "ok: scraped, erg_agent_messages_total=$ok"
