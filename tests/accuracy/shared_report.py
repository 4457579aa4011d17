# SPDX-License-Identifier: GPL-3.0-or-later
"""Report of tests/accuracy/shared.sh (docs/accuracy.md, "Shared meters"):
per job and per node, the truth next to erg with every node on its own
outlet (ergd "outlet") and with all of them behind one shared meter (ergd
"shared", [group.bank]), and each job's 95 % interval from the sd and var
data sources of its archive (docs/model.md, "Uncertainty"): whether the truth is inside,
reported (COVERAGE_OUT=FILE appends a line as tests/accuracy/coverage.py's
for coverage_table.py), not judged. args: WORK; WORK/setup.json says the rest."""
import json, math, os, sys
from truth import Samples, has_ds, job_truth, rrd_energy, shown_energy, truth_bins, truth_rows

work = sys.argv[1]
S = json.load(open(f"{work}/setup.json"))
t0, t1, step, lag, mode = S["t_start"], S["t_end"], S["step"], S["lag"], S["mode"]
INST = ["outlet", "shared"]
truth_csv = f"{work}/truth.csv"

def pct(erg, truth):
    return 100 * (erg - truth) / truth if truth > 0 else math.inf

jobs, nodes = {}, {}
for n, m in S["nodes"].items():
    rows = truth_rows(truth_csv, n)
    cpu_j, _ = truth_bins(rows, t0, t1, lag, lambda u, m=m: m["slope"] * u ** m["exponent"])
    mine = [j for j in S["jobs"] if j["node"] == n]
    jt = job_truth(cpu_j, {}, Samples(f"{work}/cpu-{n}.csv"), [j["name"] for j in mine])
    for j in mine:
        jobs[j["name"]] = {"node": n, "truth": jt[j["name"]]}
        for i in INST:
            jf = f"{work}/{i}/{n}-{j['name']}.txt"
            jobs[j["name"]][i] = rrd_energy(jf, t0, t1, step)
            if has_ds(jf, "sd") and has_ds(jf, "var"):
                sd = rrd_energy(jf, t0, t1, step, "sd")
                var = rrd_energy(jf, t0, t1, step, "var")
                jobs[j["name"]][i + "_half"] = 1.959964 * math.sqrt(sd * sd + max(var, 0))
    nodes[n] = {"truth": shown_energy(rows, t0, t1, lag), "truth_dynamic": sum(cpu_j.values())}
    for i in INST:
        f = f"{work}/{i}/node-{n}.txt"
        nodes[n][i] = rrd_energy(f, t0, t1, step, "measured")
        nodes[n][i + "_dynamic"] = rrd_energy(f, t0, t1, step, "dynamic")
meter = shown_energy(truth_rows(truth_csv, S["sum"]), t0, t1, lag)

def fit_summary(path):
    try:
        f = json.load(open(path))
    except (OSError, ValueError):
        return None
    v = f.get("validation") or {}
    return {"form": f.get("form"), "rows": (f.get("rows") or {}).get("used"),
            "idle_watts": f.get("idle_watts"), "heldout_cells": v.get("cells"),
            "mape_total_percent": v.get("mape_total_percent"),
            "mape_dynamic_percent": v.get("mape_dynamic_percent")}

res = {"mode": mode, "window_seconds": t1 - t0, "jobs": jobs, "nodes": nodes,
       "shared_meter_joules": meter,
       "fit": {"outlet": {n: fit_summary(f"{work}/outlet/fit-{n}.json") for n in nodes},
               "shared": fit_summary(f"{work}/shared/fit-group.json")}}
json.dump(res, open(f"{work}/shared-report.json", "w"), indent=1)

print(f"window {t1 - t0} s ({mode}); shared meter {S['sum']} showed {meter:.1f} J, its nodes "
      f"{sum(x['truth'] for x in nodes.values()):.1f} J")
print(f"{'job':6} {'node':4} {'truth J':>9} {'outlet J':>9} {'err %':>7} {'shared J':>9} {'err %':>7}")
for name, j in jobs.items():
    print(f"{name:6} {j['node']:4} {j['truth']:9.1f} {j['outlet']:9.1f} "
          f"{pct(j['outlet'], j['truth']):+7.2f} {j['shared']:9.1f} {pct(j['shared'], j['truth']):+7.2f}")
print(f"{'node':6} {'what':7} {'truth J':>9} {'outlet J':>9} {'err %':>7} {'shared J':>9} {'err %':>7}")
for n, x in nodes.items():
    for what, k in (("total", ""), ("dynamic", "_dynamic")):
        tr = x["truth" + k]
        print(f"{n:6} {what:7} {tr:9.1f} {x['outlet' + k]:9.1f} {pct(x['outlet' + k], tr):+7.2f} "
              f"{x['shared' + k]:9.1f} {pct(x['shared' + k], tr):+7.2f}")
def num(x, fmt=".2f"):
    return "-" if x is None else format(x, fmt)
for n, f in res["fit"]["outlet"].items():
    if f:
        print(f"fit outlet {n}: idle {num(f['idle_watts'], '.1f')} W (truth {S['nodes'][n]['idle']:g}), "
              f"held-out MAPE total {num(f['mape_total_percent'])} %, dynamic "
              f"{num(f['mape_dynamic_percent'])} % ({f['heldout_cells']} cells)")
f = res["fit"]["shared"]
if f:
    # Only the members' idle sum is identified; what it misses goes to
    # dynamic power, i.e. to the jobs, for the whole window.
    truth_idle = sum(m["idle"] for m in S["nodes"].values())
    print(f"fit shared: form {f['form']}, {f['rows']} joined rows, idle sum "
          f"{num(f['idle_watts'], '.1f')} W (truth {truth_idle:g} W), held-out MAPE total "
          f"{num(f['mape_total_percent'])} %, dynamic {num(f['mape_dynamic_percent'])} % "
          f"({f['heldout_cells']} cells)")

# The 95 % intervals: truth inside E +- half (low end at least 0).
cov = {}
for i in INST:
    rows = []
    for name, j in jobs.items():
        h = j.get(i + "_half")
        if h is None:
            continue
        e, tr = j[i], j["truth"]
        rows.append({"job": name, "node": j["node"], "energy_joules": round(e, 1),
                     "truth_joules": round(tr, 1), "low": round(max(e - h, 0), 1),
                     "high": round(e + h, 1), "inside": max(e - h, 0) <= tr <= e + h,
                     "relative_width": round(2 * h / e, 4) if e > 0 else None,
                     "error_in_halfwidths": round((e - tr) / h, 2) if h > 0 else None})
    # Each node's dynamic energy (nodes/N/dynamic_unc/node.rrd; behind the
    # shared meter the member's part of it) against the truth's.
    nd = []
    for n, x in nodes.items():
        f = f"{work}/{i}/node-{n}.dyn.txt"
        if not has_ds(f, "sd"):
            continue
        e, tr = x[i + "_dynamic"], x["truth_dynamic"]
        sd, var = rrd_energy(f, t0, t1, step, "sd"), rrd_energy(f, t0, t1, step, "var")
        h = 1.959964 * math.sqrt(sd * sd + max(var, 0))
        nd.append({"node": n, "dynamic_joules": round(e, 1), "truth_joules": round(tr, 1),
                   "low": round(max(e - h, 0), 1), "high": round(e + h, 1),
                   "relative_width": round(2 * h / e, 4) if e > 0 else None,
                   "error_in_halfwidths": round((e - tr) / h, 2) if h > 0 else None,
                   "inside": max(e - h, 0) <= tr <= e + h})
    if rows:
        w = sorted(r["relative_width"] for r in rows if r["relative_width"] is not None)
        cov[i] = {"mode": f"shared-{mode}-{i}", "seed": os.environ.get("SEED", "1"), "jobs": rows,
                  "inside": sum(r["inside"] for r in rows), "n": len(rows),
                  "median_relative_width": w[len(w) // 2] if w else None,
                  "nodes_dynamic": nd}
        if nd:
            print(f"95 % intervals of the nodes' dynamic energy ({i}): "
                  f"{sum(x['inside'] for x in nd)} of {len(nd)} inside; " +
                  ", ".join(f"{x['node']} {x['dynamic_joules']:.0f} J [{x['low']:.0f}, {x['high']:.0f}] "
                            f"truth {x['truth_joules']:.0f}{'' if x['inside'] else ' OUTSIDE'}" for x in nd))
        print(f"95 % intervals ({i}): {cov[i]['inside']} of {len(rows)} truths inside, median "
              f"relative width {cov[i]['median_relative_width']}; outside: " +
              (", ".join(f"{r['job']} {r['error_in_halfwidths']:+.2f}" for r in rows if not r["inside"]) or "none"))
        if os.environ.get("COVERAGE_OUT"):
            with open(os.environ["COVERAGE_OUT"], "a") as f:
                f.write(json.dumps(cov[i]) + "\n")
res["coverage"] = cov
json.dump(res, open(f"{work}/shared-report.json", "w"), indent=1)

# Identical jobs on one node: erg's split against the truth's.
ident = {}
a, b = S.get("identical", [None, None])
if a in jobs and b in jobs:
    ta, tb = jobs[a]["truth"], jobs[b]["truth"]
    for i in INST:
        ea, eb = jobs[a][i], jobs[b][i]
        ident[i] = 100 * abs(ea / max(1e-9, ea + eb) - ta / max(1e-9, ta + tb)) * 2
    print(f"identical jobs {a}, {b}: erg's split vs the truth's: outlet {ident['outlet']:.2f} %, "
          f"shared {ident['shared']:.2f} %")
# Goals (issue 22): per job within 3 % on the shared meter, 5 % on outlets
# (run.sh's goal); the short run has fewer cells and gets looser bounds.
lim = {"outlet": 5, "shared": 3, "identical": 2} if mode == "full" else \
      {"outlet": 10, "shared": 10, "identical": 5}
bad = [f"{i} {name} {pct(j[i], j['truth']):+.2f} %" for name, j in jobs.items() for i in INST
       if not abs(pct(j[i], j["truth"])) <= lim[i]]
bad += [f"identical jobs {i} {v:.2f} %" for i, v in ident.items() if not v <= lim["identical"]]
if bad:
    print(f"FAIL ({mode} bounds {lim}): " + ", ".join(bad))
    sys.exit(1)
print(f"ok ({mode} bounds: per job outlet <= {lim['outlet']} %, shared <= {lim['shared']} %, "
      f"identical <= {lim['identical']} %)")
