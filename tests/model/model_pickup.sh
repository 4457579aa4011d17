#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Model pickup without restart: erg-pdusim (SIMULATED meter) -> ergd <-
# erg-agent under varying load; `erg fit` on ergd's journal writes
# MODEL_DIR/NODE.json; ergd logs "model loaded", stores `modelled` in
# node.rrd, and the stored archives conserve energy:
# Σ command archives + idle = measured (idle_policy separate) within 1 %.
# The node is a cgroup2 group (erg-pdusim --node NAME=CGROUP, erg-agent
# --scope), so other tests' load reaches neither the meter nor the agent.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3 ERG=$4
. "$(dirname "$0")/../integration/lib.sh"
erg_need rrdtool ss python3 curl
erg_cgroup2
"$AGENT" --help 2>&1 | grep -q -- --scope || { echo "SKIP: erg-agent has no --scope"; exit 77; }
tag=erg-model-$$
erg_setup model
ERG_CLEANUP='erg_cg_remove $tag'
mkdir "$CG2/$tag" 2>/dev/null || { echo "SKIP: cannot create cgroup $CG2/$tag"; exit 77; }
fail() { echo "FAIL: $*"; echo "--- ergd log"; cat "$work/ergd.log"; exit 1; }

NODE=it-model STEP=2
erg_ports
erg_ergd_conf <<CONF
model_dir = $work/models
idle_policy = separate
step_seconds = $STEP
settle_steps = 1
poll_seconds = 0.5
lag_max_seconds = 0
$(erg_sim_meter)
[node.$NODE]
power = sim:1
idle_watts = 50
CONF
mkdir -p "$work/models"
erg_start_pdusim --node $NODE=$SIMPREFIX/$tag --idle 50 --slope 100 --update 0.5
erg_start_ergd
erg_start_agent $NODE --scope /$tag --interval 1

# Varying load: idle, one busy process, two, idle, one, two, idle, one,
# two (~68 s). The fit needs 2 x (features + 1) training cells besides the
# held-out quarter: CPU, disk and the eight curve terms make 22 of 2 s.
load() { for _ in $(seq 1 "$1"); do erg_in_cg $tag timeout "$2" sha256sum /dev/zero & done; sleep "$2"; }
sleep 4; load 1 8; load 2 8; sleep 6; load 1 8; load 2 8; sleep 4; load 1 8; load 2 8; sleep 4

"$ERG" fit --data-dir "$work/data" --node $NODE --out "$work/models/$NODE.json" --json \
  >"$work/fit.json" 2>"$work/fit.err" || { cat "$work/fit.err"; fail "erg fit"; }
fitted=$(date +%s)
# ergd looks at the file every ~10 s; meanwhile more load to attribute.
for _ in $(seq 1 25); do
  grep -q "model loaded" "$work/ergd.log" && break
  sleep 1
done
grep -q "model loaded" "$work/ergd.log" || fail "ergd never logged 'model loaded'"
load 1 8; sleep 2; load 2 6; sleep 5
# /metrics carries the installed model's quality and its last prediction.
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt" || fail "GET /metrics"
if command -v promtool >/dev/null; then
  promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics"
fi
for l in "erg_node_model_heldout_mape_ratio{node=\"$NODE\",kind=\"total\"}" \
         "erg_node_model_heldout_mape_ratio{node=\"$NODE\",kind=\"dynamic\"}" \
         "erg_node_model_heldout_rmse_watts{node=\"$NODE\"}" \
         "erg_node_modelled_watts{node=\"$NODE\"}" \
         "erg_cells_out_of_training_range_total{node=\"$NODE\"}"; do
  grep -qF "$l " "$work/metrics.txt" || fail "/metrics lacks $l"
done
for p in "${pids[@]}"; do kill "$p"; done
wait "${pids[@]}" 2>/dev/null || true
pids=()

dir="$work/data/nodes/$NODE"
rrdtool fetch "$dir/node.rrd" AVERAGE -r $STEP -s end-120 -e now >"$work/node.txt"
for f in "$dir"/command/*.rrd; do rrdtool fetch "$f" AVERAGE -r $STEP -s end-120 -e now; done \
  >"$work/keys.txt"
python3 - "$work" "$fitted" <<'PY' || fail "archive check"
import sys, math, collections, json
work, fitted = sys.argv[1], int(sys.argv[2])
def num(x):
    x = x.strip()
    return math.nan if x in ("-nan", "nan") else float(x)
lines = open(f"{work}/node.txt").read().split("\n")
names = lines[0].split()
node = {}
for l in lines[1:]:
    if ":" in l:
        t, v = l.split(":", 1)
        node[int(t)] = dict(zip(names, map(num, v.split())))
keysum = collections.defaultdict(float)
for l in open(f"{work}/keys.txt"):
    if ":" in l:
        t, v = l.split(":", 1)
        v = v.split()[0]  # watts (then the interval's sd, var)
        if not math.isnan(num(v)):
            keysum[int(t)] += num(v)
modelled = [t for t, r in node.items() if t > fitted and not math.isnan(r["modelled"])]
assert len(modelled) >= 5, f"modelled values in only {len(modelled)} cells after the fit"
checked = 0
for t, r in node.items():
    m = r["measured"]
    if math.isnan(m) or t not in keysum:
        continue
    total = keysum[t] + r["idle"]
    assert abs(total - m) <= 0.01 * m, (t, keysum[t], r)
    checked += 1
assert checked >= 10, f"conservation checked in only {checked} cells"
err = [abs(node[t]["modelled"] - node[t]["measured"]) / node[t]["measured"]
       for t in modelled if not math.isnan(node[t]["measured"])]
fit = json.load(open(f"{work}/fit.json"))
# The metrics are the model file's validation, as ratios.
met = {}
for l in open(f"{work}/metrics.txt"):
    if l.startswith("erg_node_model_heldout_mape_ratio{") or l.startswith("erg_node_model_idle_watts{"):
        met[l.split(" ")[0]] = float(l.split(" ")[1])
v = fit["validation"]
mt = [x for k, x in met.items() if 'kind="total"' in k]
assert len(mt) == 1 and abs(mt[0] - v["mape_total_percent"] / 100) < 1e-5, (met, v)
mi = [x for k, x in met.items() if k.startswith("erg_node_model_idle_watts")]
# (<=, and 1 mW at least: on a machine loaded by others the fitted idle can be 0 W.)
assert len(mi) == 1 and abs(mi[0] - fit["idle_watts"]) <= 1e-3 * max(fit["idle_watts"], 1), (met, fit)
print(f"ok: model MAPE(held-out) {fit['validation']['mape_total_percent']}, "
      f"{len(modelled)} modelled cells (mean |err| {100*sum(err)/max(1,len(err)):.1f} %), "
      f"conservation in {checked} cells")
PY
grep "model loaded" "$work/ergd.log"
