#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 35 item 4: an absurd model file is refused through ergd's model
# reload path (the file looked at again every ~10 s), with the reason in
# the log, counted in erg_node_model_refused_total, and the model in use
# stays (erg_node_model_idle_watts unchanged). Two nodes, checked side by
# side: m1 behind a meter of max_watts = 1000 (its physical range), m2
# with a journal whose measured power is 100..300 W.
#   start:   both get a sane model (idle 120 W)
#   round 1: m1 idle 1e308 W (absolute bound), m2 a coefficient of 1e300
#   round 2: m1 2,520 W at its training maxima (over 2 x the meter's
#            range), m2 idle 800 W (over 2 x 300 W + 10 W measured)
#   round 3: both a sane model again (idle 150 W): loaded
# usage: model_bounds.sh ERGD
set -euo pipefail
ERGD=$1
. "$(dirname "$0")/../integration/lib.sh"
erg_need python3 curl
erg_setup model-bounds
fail() { echo "FAIL: $*"; echo "--- ergd log"; cat "$work/ergd.log"; exit 1; }
erg_ports
MB=$(free_port) # nothing answers there: m1 gets no measured power
erg_ergd_conf <<CONF
model_dir = $work/models
$(erg_quick_opts)
[meter.sim]
host = 127.0.0.1
port = $MB
profile = erg-sim
max_watts = 1000
[node.m1]
power = sim:1
[node.m2]
idle_watts = 50
CONF
mkdir -p "$work/models" "$work/data/journal"
now=$(date +%s)
{ echo "time_unix_seconds,step_seconds,measured_watts,flags,cpu_seconds_per_second,ncpu"
  for i in $(seq 0 59); do echo "$((now - 3600 + i)),1,$((100 + i * 200 / 59)).000,0,0.5,4"; done
} >"$work/data/journal/m2.csv"
# model NODE IDLE COEF TRAINING_MAX: written whole, then moved into place.
model() {
  printf '{"format": "erg-model", "version": 1, "node": "%s", "step_seconds": 1,
 "idle_watts": %s, "ncpu": 4, "features": [{"name": "cpu_seconds_per_second",
 "coefficient_watts_per_unit": %s, "training_max": %s}]}\n' "$1" "$2" "$3" "$4" \
    >"$work/models/.$1.tmp"
  mv "$work/models/.$1.tmp" "$work/models/$1.json"
}
metric() { awk -v k="$1" '$1 == k { print $2 }' "$work/metrics.txt"; }
snap() { curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt" || fail "GET /metrics"; }
model m1 120 30 4
model m2 120 30 4
erg_start_ergd
erg_wait_log "$work/ergd.log" "model loaded" 2 10 || fail "the sane models were not loaded"

model m1 1e308 30 4
model m2 120 1e300 0
erg_wait_log "$work/ergd.log" "not loaded" 2 15 || fail "round 1 was not refused"
model m1 120 600 4
model m2 800 30 4
erg_wait_log "$work/ergd.log" "not loaded" 4 15 || fail "round 2 was not refused"
snap
for n in m1 m2; do
  [ "$(metric "erg_node_model_idle_watts{node=\"$n\"}")" = 120 ] ||
    fail "$n: the model in use changed: $(grep "model_idle_watts{node=\"$n\"" "$work/metrics.txt")"
  [ "$(metric "erg_node_model_refused_total{node=\"$n\"}")" = 2 ] ||
    fail "$n: want 2 refusals counted: $(grep "refused_total{node=\"$n\"" "$work/metrics.txt")"
done
for want in "node m1: model .* not loaded: idle power 1e+308 W is outside 0..1e+06 W; keeping" \
            "node m2: model .* not loaded: coefficient of cpu_seconds_per_second is 1e+300 W per unit" \
            "node m1: model .* not loaded: the model predicts 2520 W at its training maxima, over 2 x the node's meters' range, 1000 W" \
            "node m2: model .* not loaded: idle power 800 W is above 610 W, 2 x the highest power measured on the node (300 W)"; do
  grep -q -- "$want" "$work/ergd.log" || fail "the log lacks '$want'"
done
model m1 150 30 4
model m2 150 30 4
erg_wait_log "$work/ergd.log" "model loaded" 4 15 || fail "round 3: the sane models were not loaded"
snap
for n in m1 m2; do
  [ "$(metric "erg_node_model_idle_watts{node=\"$n\"}")" = 150 ] || fail "$n: the sane model was not installed"
done
grep -E "not loaded|model loaded" "$work/ergd.log"
echo "ok: 4 absurd models refused with their reasons, the models in use kept, sane ones loaded"
