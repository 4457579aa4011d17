#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Shared meters ([group.NAME], issue 22). Group "bank" (nodes a, b) shares
# unit 2: with models whose idle powers are 100 W and 300 W and no activity,
# a gets 1/4 and b 3/4 of every cell; the journal keeps the whole meter
# (flag 64, the same in both members' rows) and the members' energy adds up
# to it exactly. Group "rest" (c, d) is a residual meter, units 3 + 4 minus
# unit 1 (node solo's outlet): its journal follows the truth of that sum;
# without models it is split equally, and counted so. Bank's models are of
# one fit (created_unix_seconds); MODEL_DIR/group/bank.json beside them is
# first another fit's (refused, said), then, replaced, theirs: ergd reads the
# members' cross covariance and the split cells from then on take it.
set -euo pipefail
PDUSIM=$1 ERGD=$2
. "$(dirname "$0")/lib.sh"
for t in python3 rrdtool; do command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }; done
erg_setup shared_meter
erg_ports
erg_ergd_conf <<CONF
settle_steps = 1
poll_seconds = 0.5
step_seconds = 2
$(erg_sim_meter)
[node.solo]
power = sim:1
[group.bank]
power = sim:2
nodes = a b
[group.rest]
power = sim:3 + sim:4 - sim:1
nodes = c, d
CONF
mkdir -p "$work/data/models"
for m in a:100 b:300; do
  cat >"$work/data/models/${m%%:*}.json" <<JSON
{"format": "erg-model", "version": 1, "node": "${m%%:*}", "idle_watts": ${m#*:},
 "created_unix_seconds": 1790000000,
 "features": [{"name": "cpu_seconds_per_second", "coefficient_watts_per_unit": 10,
               "training_max": 4}]}
JSON
done
mkdir -p "$work/data/models/group"
bank_cov() { # CREATED: bank's cross covariance file of that fit
  cat >"$work/data/models/group/bank.json.new" <<JSON
{"group": "bank", "created_unix_seconds": $1,
 "members": [{"node": "a", "features": ["cpu_seconds_per_second"], "terms": [1]},
             {"node": "b", "features": ["cpu_seconds_per_second"], "terms": [2]}],
 "matrix": [[4, 0, 0], [0, 0.25, -0.2], [0, -0.2, 0.25]]}
JSON
  mv "$work/data/models/group/bank.json.new" "$work/data/models/group/bank.json"
}
bank_cov 1789999999 # another fit's: not used until replaced
# Tails' windows kept by a run before the [group]s: solo (an outlet)
# restores its, member a's own is not read.
mkdir -p "$work/data/journal"
# Group bank's kept choice is its members'.
for n in solo a bank.group; do
  echo "erg-tailwin 1 chosen=3 update_seconds=0.500000 chosen_unix_seconds=1790000000" \
    >"$work/data/journal/$n.tailwin"
done
erg_start_pdusim --node u1 --node u2 --node u3 --node u4 --idle 80 --slope 50 --update 0.5 \
  --noise 5 --seed 7 --truth "$work/truth.csv"
erg_start_ergd
sleep 8
bank_cov 1790000000
sleep 16
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
kill "$ERGD_PID"; wait "$ERGD_PID" || true
grep -q 'node solo: the curve.s tails from windows of 2 meter update(s) (from the last run' \
  "$work/ergd.log" || { echo "FAIL: solo's kept window not restored"; cat "$work/ergd.log"; exit 1; }
grep -q "group bank: the members' curve tails from two updates' mean load (even pairs) (from the last run" \
  "$work/ergd.log" || { echo "FAIL: bank's kept window not restored"; cat "$work/ergd.log"; exit 1; }
if grep -q 'node a: the curve.s tails from windows' "$work/ergd.log"; then
  echo "FAIL: member a restored a tails' window"; cat "$work/ergd.log"; exit 1
fi
grep -q 'group rest: 2 of 2 nodes have no model yet' "$work/ergd.log" ||
  { echo "FAIL: the equal split of rest was not said"; cat "$work/ergd.log"; exit 1; }
grep -q 'group bank: .*/models/group/bank.json is not of the fit of node a.s model' \
  "$work/ergd.log" || { echo "FAIL: another fit's file not refused"; cat "$work/ergd.log"; exit 1; }
grep -q 'group bank: the members. cross covariance from .*/models/group/bank.json' \
  "$work/ergd.log" || { echo "FAIL: bank's cross covariance not read"; cat "$work/ergd.log"; exit 1; }
python3 - "$work/data/journal" "$work/truth.csv" "$work/metrics.txt" \
  "$(dirname "$0")/../accuracy" <<'PY'
import os, subprocess, sys
jdir, truth_csv, metrics = sys.argv[1:4]
data = os.path.dirname(jdir)
sys.path.insert(0, sys.argv[4])
import truth

def journal(node):
    rows = {}
    for line in open(f"{jdir}/{node}.csv"):
        if line[0].isdigit():
            t, step, w, flags = line.split(",")[:4]
            rows[int(t)] = (int(step), float(w), int(flags))
    return rows

met = {}
for l in open(metrics):
    if not l.startswith("#"):
        k, v = l.rsplit(" ", 1)
        met[k] = float(v)

energy, span = truth.meter_energy(truth_csv)

def mean_watts(name, t0, step):
    return truth.mean_watts(energy, name, t0, step)

a, b = journal("a"), journal("b")
common = [t for t in a if t in b and not a[t][2] & 1]
assert len(common) >= 5, f"too few measured cells: {a}"
for t in common:
    assert a[t][2] & 64 and b[t][2] & 64, f"cell {t}: shared rows not flagged 64: {a[t]} {b[t]}"
    assert a[t][1] == b[t][1], f"cell {t}: members journal different meter power {a[t]} {b[t]}"
solo = journal("solo")
assert not any(r[2] & 64 for r in solo.values()), "a node with its own outlet flagged shared"

# The split: models say 100 W and 300 W, nothing runs.
sa = met['erg_node_meter_share_ratio{node="a",group="bank"}']
sb = met['erg_node_meter_share_ratio{node="b",group="bank"}']
assert abs(sa - 0.25) < 1e-9 and abs(sb - 0.75) < 1e-9, (sa, sb)
for n in "cd":
    s = met[f'erg_node_meter_share_ratio{{node="{n}",group="rest"}}']
    assert abs(s - 0.5) < 1e-9, (n, s)
assert met['erg_group_equal_split_cells_total{group="rest"}'] >= 5, met
assert met['erg_group_cross_covariance_cells_total{group="bank"}'] >= 5, met
assert met['erg_group_cross_covariance_cells_total{group="rest"}'] == 0, met

# Conservation, cell by cell, in the stored archives (read after ergd
# stopped, so no cell is journalled after what is compared): each member
# has its share of the meter, and the shares add up to it.
def stored(node):
    out = subprocess.run(["rrdtool", "fetch", f"{data}/nodes/{node}/node.rrd", "AVERAGE", "-r",
                          "2", "-s", str(min(a) - 2), "-e", str(max(a) + 4)],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    ds = out[0].split().index("measured")
    rows = {}
    for l in out[1:]:
        if ":" in l:
            t, v = l.split(":", 1)
            rows[int(t)] = float(v.split()[ds])  # stamped with the cell's end
    return rows

for g, members, share in (("bank", "ab", (0.25, 0.75)), ("rest", "cd", (0.5, 0.5))):
    rows = [journal(n) for n in members]
    st = [stored(n) for n in members]
    whole = parts = 0
    cells = [(t, r) for t, r in rows[0].items() if not r[2] & 1 and t + r[0] in st[0]]
    assert len(cells) >= 5, f"{g}: too few stored cells {st[0]}"
    for t, (step, w, _) in cells:
        got = [s[t + step] for s in st]
        for n, x, want in zip(members, got, share):
            # the journal keeps the meter to 1 mW
            assert abs(x - want * w) <= 1e-3, f"{g} cell {t}: {n} stored {x} W, {want} x {w} W"
        whole += w * step
        parts += sum(got) * step
    assert abs(parts - whole) <= 1e-3 * sum(r[0] for _, r in cells), \
        f"{g}: members {parts} J, meter {whole} J"
    print(f"ok: group {g}: {len(cells)} cells, members' energy {parts:.1f} J = the meter's "
          f"{whole:.1f} J, split {share}")

# The residual follows units 3 + 4 - 1 (cells wholly inside the truth log).
t_lo, t_hi = span("u1")
c = journal("c")
cells = [(t, r) for t, r in c.items() if not r[2] & 1 and t_lo <= t and t + r[0] < t_hi]
assert len(cells) >= 5, c
worst = 0
for t, (step, w, flags) in cells:
    want = mean_watts("u3", t, step) + mean_watts("u4", t, step) - mean_watts("u1", t, step)
    assert abs(w - want) <= 0.05 * want, f"cell {t}: residual {w:.1f} W, truth {want:.1f} W"
    worst = max(worst, abs(w - want) / want)
print(f"ok: {len(cells)} residual cells follow u3 + u4 - u1 (worst {100 * worst:.2f}%)")
print(f"ok: bank split {sa:.2f}/{sb:.2f} by the models, rest equally without models")
PY
