# SPDX-License-Identifier: GPL-3.0-or-later
"""The per-job interval table of docs/accuracy.md ("Per-job intervals") from
the lines coverage.py appended to COVERAGE_OUT over several runs:
  for s in 1 2 3 ...; do SEED=$s COVERAGE_OUT=/tmp/cov.jsonl tests/accuracy/run.sh --short BUILD; done
  python3 tests/accuracy/coverage_table.py /tmp/cov.jsonl"""
import json, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| seed | inside | median relative width | outside (error in half-widths) |")
print("| --- | --- | --- | --- |")
jobs, widths = [], []
for r in runs:
    out = ", ".join(f"{j['job']} {j['error_in_halfwidths']:+.2f}" for j in r["jobs"] if not j["inside"])
    print(f"| {r['seed']} | {r['inside']} of {r['n']} | {r['median_relative_width']:.3f} | {out or '—'} |")
    jobs += r["jobs"]
inside = sum(j["inside"] for j in jobs)
widths = sorted(j["relative_width"] for j in jobs if j["relative_width"] is not None)
by = {}
for j in jobs:
    by.setdefault(j["job"], []).append(j["inside"])
print(f"| all | {inside} of {len(jobs)} ({100 * inside / max(1, len(jobs)):.0f} %) | "
      f"{widths[len(widths) // 2]:.3f} | " +
      ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(by.items())) + " |")
# The nodes' dynamic energy (coverage.py's nodes_dynamic), where the runs have it.
nd = [x for r in runs for x in r.get("nodes_dynamic", [])]
if nd:
    w = sorted(x["relative_width"] for x in nd if x["relative_width"] is not None)
    print(f"node dynamic: {sum(x['inside'] for x in nd)} of {len(nd)} inside, median relative width "
          f"{w[len(w) // 2]:.3f}; outside: " +
          (", ".join(f"{x['node']} {x['error_in_halfwidths']:+.2f}" for x in nd if not x["inside"]) or "none"))
