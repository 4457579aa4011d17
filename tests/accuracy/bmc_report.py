# SPDX-License-Identifier: GPL-3.0-or-later
"""The meters of one accuracy run side by side (tests/accuracy/bmc.sh;
docs/accuracy.md, "BMC-shaped meters"): per job the truth and erg's energy
and error with the outlet meter (WORK/report.txt) and each BMC variant
(WORK/VARIANT/report.txt, report.py's output), and the lags each ergd
found (its log). Writes WORK/bmc-report.json. Exit 1 when a BMC variant's
job is further from the truth than the bound: BMC_BOUND percent, default
2 in a full run and 10 in a short one (the outlet's short bound).
usage: bmc_report.py WORK VARIANT..."""
import json
import os
import re
import sys


def report(path):
    """report.py's JSON (the text before its summary lines)."""
    return json.JSONDecoder().raw_decode(open(path).read())[0]


def lags(log):
    """node -> the lags ergd took, in order ("3 s r=0.95")."""
    out = {}
    for l in open(log, errors="replace"):
        m = re.search(r"node (\S+): meter (?:reading lags activity by|lag now) (\d+) s.*?"
                      r"\(r=([\d.]+)", l)
        if m:
            out.setdefault(m.group(1), []).append(f"{m.group(2)} s (r {m.group(3)})")
    return out


def main():
    work, variants = sys.argv[1], sys.argv[2:]
    meters = {"outlet": work, **{v: os.path.join(work, v) for v in variants}}
    reps = {m: report(os.path.join(d, "report.txt")) for m, d in meters.items()}
    mode = reps["outlet"]["mode"]
    bound = float(os.environ.get("BMC_BOUND", "2" if mode == "full" else "10"))
    out = {"mode": mode, "bound_percent": bound, "jobs": {}, "lags": {}, "mape": {}}
    # An idle that is off by d W puts d W x the window into the node's
    # jobs: on a starved host (a job's dynamic power ~1 W) that is the error.
    window = reps["outlet"]["window_seconds"]
    head = f"{'job':6} {'truth J':>9}" + "".join(f" {m + ' J':>10} {'error':>8}" for m in meters)
    print(head)
    bad = []
    for n, node in reps["outlet"]["nodes"].items():
        for j, (_, truth) in node["job_energy_joules_erg_truth"].items():
            row, line = {"node": n, "truth_joules": truth}, f"{j:6} {truth:9.1f}"
            for m, r in reps.items():
                e = r["nodes"][n]["job_energy_joules_erg_truth"][j][0]
                err = r["job_error_percent"][j]
                row[m] = {"joules": e, "error_percent": err}
                line += f" {e:10.1f} {err:+7.2f}%"
                if m != "outlet" and not abs(err) <= bound:
                    bad.append(f"{m} {j} {err:+.2f} %")
            out["jobs"][j] = row
            print(line + f"   truth {truth / window:6.2f} W")
    for m, d in meters.items():
        out["lags"][m] = lags(os.path.join(d, "ergd.log"))
        out["mape"][m] = {n: [x["mape_total_percent"], x["mape_dynamic_percent"]]
                          for n, x in reps[m]["nodes"].items()}
        # What a perfect model gets against the meter's held-out cells
        # (heldout.py; report.py judges the MAPE less it).
        out.setdefault("mape_floor", {})[m] = {
            n: [(x.get("mape_floor") or {}).get(k) for k in ("total_percent", "dynamic_percent")]
            for n, x in reps[m]["nodes"].items()}
        out.setdefault("idle_watts", {})[m] = {n: x["idle_watts"]
                                               for n, x in reps[m]["nodes"].items()}
        pct = lambda v: "-" if v is None else f"{v:.2f}"
        print(f"{m}: lags " + "; ".join(f"{n} {' -> '.join(v)}" for n, v in
                                         sorted(out["lags"][m].items())) +
              "; idle " + ", ".join(f"{n} {w:.2f} W" for n, w in out["idle_watts"][m].items()) +
              "; held-out MAPE total/dynamic " +
              ", ".join(f"{n} {pct(a)}/{pct(b)} % (floor {pct(fa)}/{pct(fb)} %)"
                        for (n, (a, b)), (fa, fb) in zip(out["mape"][m].items(),
                                                         out["mape_floor"][m].values())))
    json.dump(out, open(os.path.join(work, "bmc-report.json"), "w"), indent=1)
    if bad:
        print(f"FAIL: BMC jobs beyond {bound:g} %: " + ", ".join(bad))
        sys.exit(1)
    print(f"ok: every job on the BMC-shaped meters within {bound:g} %")


if __name__ == "__main__":
    main()
