# SPDX-License-Identifier: GPL-3.0-or-later
"""Report of tests/accuracy/light_load.sh (issue 38; docs/accuracy.md "Light
load"): each node's fitted curve above idle at 0.1 and 0.2 core against the
simulator's slope * u^exponent, fitted from the journal's tails (the cell's
mean of its samples' tails, fit-NODE.json) and from the tails of the cell's
mean (fit-mean-NODE.json, the journal without those columns).
args: WORK MODE IDLE SLOPE EXPONENT STEP"""
import json, math, sys

work, mode = sys.argv[1], sys.argv[2]
idle, slope, expo = map(float, sys.argv[3:6])
DEG = 8


def tails(u):
    """T_1..T_8 at u: T_i = sum over j >= i of the degree-8 Bernstein b_j(u)."""
    b = [math.comb(DEG, j) * u ** j * (1 - u) ** (DEG - j) for j in range(DEG + 1)]
    return [sum(b[i:]) for i in range(1, DEG + 1)]


def curve(model, cores):
    """The model's power above its idle at `cores` of CPU time, no disk."""
    u = min(max(cores / model["ncpu"], 0), 1)
    t, w = tails(u), 0.0
    for f in model["features"]:
        name, c = f["name"], f["coefficient_watts_per_unit"]
        if "_tail8_" in name:
            w += c * t[int(name.rsplit("_", 1)[1]) - 1]
        elif name == "cpu_seconds_per_second":
            w += c * cores
    return w


# The goal (full run): within 10 % at 0.1 core on both nodes. The short
# run's ~36 cells of 2 s are too few to hold it: on the CPU-only node
# 1.03 … 1.09 in five quiet runs but 1.37 in a fresh-clone CI run with a
# build beside it (the tails of the cell mean: 1.07 … 1.18, and 1.62), so
# the short run bounds it at 25 % and asks that the journal's tails be
# nearer the truth there than the tails of the cell mean (what the tails
# are for; it held in every run). On the I/O node the disk coefficient's
# error over those cells (its power is 10 x the curve's at 0.1 core)
# spreads the curve by ±30 % (seen 0.92 … 1.29): a sanity bound.
LIMIT = {"full": {"io": 0.10, "cpu": 0.10}, "short": {"io": 0.40, "cpu": 0.25}}
res, bad = {"mode": mode, "nodes": {}}, []
for n in ("io", "cpu"):
    out = {}
    for kind, path in (("journal_tails", f"{work}/fit-{n}.json"),
                       ("cell_mean_tails", f"{work}/fit-mean-{n}.json"),
                       ("journal_tails_convex_auto", f"{work}/fit-auto-{n}.json"),
                       ("journal_tails_exact_idle", f"{work}/fit-exact-{n}.json")):
        m = json.load(open(path))
        v = m.get("validation", {})
        truth = {c: slope * (c / m["ncpu"]) ** expo for c in (0.1, 0.2)}
        out[kind] = {"idle_watts": round(m["idle_watts"], 3),
                     "curve_shape": m.get("curve_shape"),
                     "fitted_over_true": {f"{c}_core": round(curve(m, c) / truth[c], 3)
                                          for c in truth},
                     "cells": m.get("training", {}).get("cells"),
                     "heldout_mape_total_percent": v.get("mape_total_percent")}
    prof = json.load(open(f"{work}/models/idle/{n}.json"))
    out["idle_profile"] = {"mean_watts": prof["mean_watts"], "cells": prof["cells"],
                           "error_watts": round(prof["mean_watts"] - idle, 3)}
    res["nodes"][n] = out
print(json.dumps(res, indent=1))
for n, o in res["nodes"].items():
    a, b = o["journal_tails"]["fitted_over_true"], o["cell_mean_tails"]["fitted_over_true"]
    e = o["journal_tails_exact_idle"]["fitted_over_true"]
    mo = o["journal_tails_convex_auto"]["fitted_over_true"]
    print(f"{n}: fitted / true at 0.1 / 0.2 core: {a['0.1_core']:.3f} / {a['0.2_core']:.3f} "
          f"(journal tails), {b['0.1_core']:.3f} / {b['0.2_core']:.3f} (tails of the cell mean), "
          f"{e['0.1_core']:.3f} / {e['0.2_core']:.3f} (journal tails, the simulator's idle), "
          f"{mo['0.1_core']:.3f} / {mo['0.2_core']:.3f} (journal tails, --curve-shape auto: "
          f"{o['journal_tails_convex_auto']['curve_shape']}); "
          f"idle profile {o['idle_profile']['error_watts']:+.3f} W off "
          f"({o['idle_profile']['cells']} cells)")
    if not abs(a["0.1_core"] - 1) <= LIMIT[mode][n]:
        bad.append(f"{n} at 0.1 core")
    if n == "cpu" and not abs(a["0.1_core"] - 1) < abs(b["0.1_core"] - 1):
        bad.append(f"{n}: the journal's tails no nearer the truth than the cell mean's")
lim = ", ".join(f"{n} {100 * v:.0f} %" for n, v in LIMIT[mode].items())
if bad:
    print(f"FAIL ({mode} bounds at 0.1 core: {lim}): " + ", ".join(bad))
    sys.exit(1)
print(f"ok ({mode} bounds at 0.1 core: {lim})")
