# SPDX-License-Identifier: GPL-3.0-or-later
"""The per-job interval table of docs/accuracy.md ("Per-job intervals") from
the lines coverage.py (run.sh) and shared_report.py (shared.sh) appended to
COVERAGE_OUT over several runs:
  for s in 1 2 3 ...; do SEED=$s COVERAGE_OUT=/tmp/cov.jsonl tests/accuracy/run.sh --short BUILD; done
  for s in 1 2 3 ...; do SEED=$s COVERAGE_OUT=/tmp/cov.jsonl tests/accuracy/shared.sh --short BUILD; done
  python3 tests/accuracy/coverage_table.py /tmp/cov.jsonl
One row per run and meter (run.sh: each node on its own outlet; shared.sh:
its outlet ergd and its shared-meter ergd, each a line), then the totals per
meter and over all."""
import json, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]


def meter(r):
    if r.get("meter"):
        return r["meter"]
    m = r.get("mode", "")
    return ("shared meter" if m.endswith("-shared") else "outlets (shared.sh)") \
        if m.startswith("shared-") else "outlets (run.sh)"


def nodes_cell(nd):
    if not nd:
        return "—"
    w = sorted(x["relative_width"] for x in nd if x["relative_width"] is not None)
    out = ", ".join(f"{x['node']} {x['error_in_halfwidths']:+.2f}" for x in nd if not x["inside"])
    return f"{sum(x['inside'] for x in nd)} of {len(nd)} ({w[len(w) // 2]:.3f}" + \
        (f"; out: {out})" if out else ")")


print("| seed | meter | jobs inside | median relative width | outside (error in half-widths) "
      "| nodes' dynamic inside (median width) |")
print("| --- | --- | --- | --- | --- | --- |")
for r in runs:
    out = ", ".join(f"{j['job']} {j['error_in_halfwidths']:+.2f}" for j in r["jobs"] if not j["inside"])
    print(f"| {r['seed']} | {meter(r)} | {r['inside']} of {r['n']} | "
          f"{r['median_relative_width']:.3f} | {out or '—'} | {nodes_cell(r.get('nodes_dynamic'))} |")


def total(label, rs):
    jobs = [j for r in rs for j in r["jobs"]]
    if not jobs:
        return
    inside = sum(j["inside"] for j in jobs)
    w = sorted(j["relative_width"] for j in jobs if j["relative_width"] is not None)
    e = [abs(j["error_in_halfwidths"]) for j in jobs if j["error_in_halfwidths"] is not None]
    rms = (sum(x * x for x in e) / len(e)) ** 0.5 if e else float("nan")
    nd = [x for r in rs for x in r.get("nodes_dynamic", [])]
    print(f"| all | {label} | {inside} of {len(jobs)} ({100 * inside / len(jobs):.0f} %) | "
          f"{w[len(w) // 2]:.3f} | rms error {rms:.2f} half-widths (calibrated: 0.51) | "
          f"{nodes_cell(nd)} |")


for m in ("outlets (run.sh)", "outlets (shared.sh)", "shared meter"):
    total(m, [r for r in runs if meter(r) == m])
total("every meter", runs)
