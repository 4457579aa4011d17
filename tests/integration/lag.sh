#!/usr/bin/env bash
# Lag estimation end to end: erg-pdusim delays power by 3 s; with a bursty
# load, ergd must estimate the lag within one meter update period (1 s).
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit 77; }
erg_setup lag
ERG_CLEANUP='kill $(jobs -p) 2>/dev/null || true'
erg_ports
erg_ergd_conf <<CONF
poll_seconds = 0.5
lag_window_seconds = 45
$(erg_sim_meter)
[node.lag-node]
power = sim
CONF
erg_start_pdusim --node lag-node --update 1 --lag 3 --idle 50 --slope 150
erg_start_ergd
erg_start_agent lag-node --interval 0.5
# Bursts of 1 or 2 busy processes, 2..6 s on, 2..6 s off.
RANDOM=7
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ]; do
  n=$((1 + RANDOM % 2))
  for _ in $(seq 1 $n); do timeout $((2 + RANDOM % 5)) sha256sum /dev/zero & done
  wait_for=$((4 + RANDOM % 6)); sleep $wait_for
done
sleep 2
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
lag=$(awk '/^erg_node_lag_seconds\{node="lag-node"\}/ {print $2}' "$work/metrics.txt")
r=$(awk '/^erg_node_lag_correlation\{node="lag-node"\}/ {print $2}' "$work/metrics.txt")
[ -n "$lag" ] || { echo "FAIL: no lag estimate"; grep -i lag "$work/ergd.log"; exit 1; }
python3 -c "import sys; sys.exit(0 if abs($lag - 3) <= 1 else 1)" ||
  { echo "FAIL: lag estimated $lag s (r=$r), simulator lag 3 s"; exit 1; }
grep -q "lags activity by" "$work/ergd.log"
echo "ok: lag $lag s (r=$r)"
