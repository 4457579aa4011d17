#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A job's interval on a node read as power samples (docs/model.md,
# "Uncertainty": a BMC's readings): each reading held until the next stands
# for power that moved in between, a variance of dw² h² / 4 per hold (dw
# the next reading's change, h the hold), an error of the node's measured
# energy, F² of it to a job; on a node with an energy counter there is none.
# n1 is read over Redfish from erg-pdusim's simulated BMC (1-s samples,
# every answer logged), n2 from its Modbus energy counter; both have the
# same hand-written model (one CPU term, idle profile sd 0.5 W over 30
# cells, no covariance, lag compensation off), so each job's variance per
# cell is F² (1/12 + noise² + the holds') on n1, with the holds' from the
# answers ergd got, and F² (q² / 6 / step² + noise²) on n2.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
acc=$(cd "$(dirname "$0")/../accuracy" && pwd)
erg_need rrdtool python3 ss curl stress-ng
erg_cgroup2
"$AGENT" --help 2>&1 | grep -q -- --scope || { echo "SKIP: erg-agent has no --scope"; exit 77; }
"$PDUSIM" --help 2>&1 | grep -q -- --redfish-channel ||
  { echo "SKIP: erg-pdusim has no --redfish-channel"; exit 77; }
tag=erg-samp-$$
erg_setup sampled
erg_cg_make $tag-n1 $tag-n2 $tag-n1/job_11 $tag-n2/job_22

STEP=2
erg_ports
RP=$(free_port)
python3 "$acc/bmc_tree.py" "$work/tree" n1
erg_ergd_conf <<CONF
step_seconds = $STEP
settle_steps = 1
poll_seconds = 0.25
lag_max_seconds = 0
idle_policy = separate
$(erg_sim_meter)
[meter.bmc]
driver = redfish
host = http://127.0.0.1:$RP
chassis = /redfish/v1/Chassis/n1
auth = none
[node.n1]
power = bmc
[node.n2]
power = sim:2
CONF
mkdir -p "$work/data/models"
for n in n1 n2; do
  cat >"$work/data/models/$n.json" <<JSON
{"format": "erg-model", "version": 1, "node": "$n", "step_seconds": $STEP, "idle_watts": 40,
 "idle_source": "idle_profile", "idle_profile_rows": 30,
 "idle_profile": {"format": "erg-idle-profile", "version": 1, "node": "$n", "mean_watts": 40,
  "stddev_watts": 0.5, "cells": 30, "first_unix_seconds": 1763700000,
  "last_unix_seconds": 1763700060, "ncpu": 2, "mean_utilization": 0, "max_utilization": 0,
  "recorded_unix_seconds": 1763700100},
 "ncpu": 2,
 "features": [{"name": "cpu_seconds_per_second", "coefficient_watts_per_unit": 50,
               "training_max": 2}],
 "training": {"first_unix_seconds": 1763700000, "last_unix_seconds": 1763700400, "cells": 200},
 "validation": {"method": "holdout last 25%", "cells": 50, "cells_dynamic": 50,
                "mae_watts": 3.2, "rmse_watts": 4.0, "r2": 0.9}}
JSON
done
erg_start_pdusim --node "n1=$SIMPREFIX/$tag-n1" --node "n2=$SIMPREFIX/$tag-n2" --idle 40 --slope 50 \
  --update 0.5 --redfish "$work/tree" --redfish-http "127.0.0.1:$RP" \
  --redfish-channel "/redfish/v1/Chassis/n1=n1,quantum=1,refresh=1" --redfish-log "$work/answers.csv"
wait_port "$RP" || { echo "FAIL: erg-pdusim did not serve Redfish on $RP"; cat "$work/pdusim.log"; exit 1; }
erg_start_ergd
for n in n1 n2; do erg_start_agent $n --scope "/$tag-$n" --interval 0.5; done
sleep 2
LOAD=16
erg_in_cg "$tag-n1/job_11" timeout $LOAD stress-ng --cpu 1 --cpu-load 40 -q & pids+=($!)
erg_in_cg "$tag-n2/job_22" timeout $LOAD stress-ng --cpu 1 --cpu-load 40 -q & pids+=($!)
sleep $((LOAD + 3 * STEP))
data=$work/data
fetch() { rrdtool fetch "$1" AVERAGE -r $STEP -s end-60 -e now; }
for nj in n1:11 n2:22; do
  n=${nj%:*} d=$data/nodes/${nj%:*}/job
  fetch "$data/nodes/$n/node.rrd" >"$work/$n-node.txt"
  safe=$(awk -F'\t' -v k="${nj#*:}" '$2 == k { print $1 }' "$d/index.tsv" 2>/dev/null) || true
  [ -n "$safe" ] && [ -f "$d/$safe.rrd" ] ||
    { echo "FAIL: $n has no archive of job ${nj#*:}"; tail "$work/ergd.log"; exit 1; }
  fetch "$d/$safe.rrd" >"$work/$n-job.txt"
done
python3 - "$work" $STEP "$acc" <<'PY'
import csv, math, sys
from statistics import NormalDist
work, step = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from truth import rrd as table  # rrdtool fetch output: {t: {column: value}}

# The noise as ergd takes it (fit/uncertainty.c): the idle profile's sample
# sd with Student's t.
T29 = 2.045230  # t_{0.975, 29}
noise2 = (0.5 * math.sqrt(30 / 29) * T29 / NormalDist().inv_cdf(0.975)) ** 2
# The holds ergd saw: each answer's value until a different one came (its
# arrival); one longer than the typical hold (the mean of those up to the
# gap a poll bridges, 5 polls + 2 s, over the last ~10) counts its last
# typical length only. dw² h² / 4 each, spread over the cells by time.
ans = [(float(r["answer_unix_seconds"]), float(r["watts"]))
       for r in csv.DictReader(open(f"{work}/answers.csv")) if r["uri"].endswith("/n1/Power")]
holds, typ, max_gap = {}, 0.0, 0.25 * 5 + 2
since, w0 = None, None
for t, w in sorted(ans):
    if w0 is None:
        since, w0 = t, w
    elif w != w0:
        h = t - since
        if h <= max_gap:
            typ = 0.9 * typ + 0.1 * h if typ > 0 else h
        a = t - min(h, typ if typ > 0 else max_gap)
        v = (w - w0) ** 2 * (t - a) ** 2 / 4
        c = math.floor(a / step) * step
        while c < t:
            part = (min(t, c + step) - max(a, c)) / (t - a)
            holds[c + step] = holds.get(c + step, 0) + v * part  # rrdtool's time: the cell's end
            c += step
        since, w0 = t, w
fail, seen = [], {}
for n, key in (("n1", "11"), ("n2", "22")):
    node, j = table(f"{work}/{n}-node.txt"), table(f"{work}/{n}-job.txt")
    got = []
    for tt, r in j.items():
        d = node.get(tt, {}).get("dynamic", math.nan)
        if not (r.get("watts", 0) > 1 and d > 1) or math.isnan(r.get("var", math.nan)):
            continue
        f = r["watts"] / d
        got.append((tt, r["var"] / step / (f * f)))
    seen[n] = got
    if len(got) < 3:
        fail.append(f"{n}: job {key} has only {len(got)} busy cells with an interval")
# n1: beyond the quantum and the noise, the holds' variance of the cell's
# mean power; summed over the busy cells, within 20 % of the answers'
# (each answer is a poll of ergd's; the two clocks differ by microseconds).
extra = sum(v - 1 / 12 - noise2 for _, v in seen["n1"])
want = sum(holds.get(tt, 0) / step ** 2 for tt, _ in seen["n1"])
if not want > 0.5:
    fail.append(f"n1: the answers' holds give only {want:.3f} W^2 over the busy cells")
elif abs(extra - want) > 0.2 * want:
    fail.append(f"n1 (power samples): the holds' variance over {len(seen['n1'])} cells is "
                f"{extra:.3f} W^2, the answers give {want:.3f}")
for tt, v in seen["n1"]:  # a cell whose reading held still has no hold's term
    if v < 1 / 12 + noise2 - 1e-6:
        fail.append(f"n1 t={tt}: var / F^2 {v:.4f} W^2, less than quantum + noise")
for tt, v in seen["n2"]:
    # the counter's quantum (q^2 / 6 / step^2, q <= 1 J) besides the noise
    if not noise2 - 1e-6 <= v <= noise2 + 1 / (6 * step * step) + 1e-6:
        fail.append(f"n2 (energy counter) t={tt}: var / F^2 {v:.4f} W^2, "
                    f"expected noise^2 {noise2:.4f} (+ <= {1 / (6 * step * step):.4f})")
if fail:
    print("FAIL:\n  " + "\n  ".join(fail[:20])); sys.exit(1)
print(f"ok: power samples (n1): the holds' variance {extra:.3f} W^2 over {len(seen['n1'])} cells "
      f"(the answers': {want:.3f}); energy counter (n2): noise only in {len(seen['n2'])} cells")
PY
