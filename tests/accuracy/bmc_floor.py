# SPDX-License-Identifier: GPL-3.0-or-later
"""The BMC-shaped meters' held-out floor taken apart (docs/accuracy.md, "The
held-out MAPE's floor"), from a kept run (KEEP=1 tests/accuracy/run.sh):
each variant's answers (WORK/bmc-answers.csv: value, arrival, sample time)
read by an ideal reader (a line through the readings, as ergd's halves,
averaged over each held-out cell) that knows (a) each sample's true time,
(b) only the arrival (bmc, bmc5) or the whole-second reading time (bmct),
placed by the best constant lag, (c) the same in whole seconds; beside
the floor of ergd's own cells (heldout.py). Dynamic MAPE floors, %.
usage: bmc_floor.py WORK [IDLE SLOPE EXPONENT LAG DISK_W_PER_MBPS]"""
import bisect
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import floor, heldout_cells  # noqa: E402
from truth import truth_bins, truth_rows  # noqa: E402

VARIANTS = {"bmc": ("", 0.0), "bmc5": ("avg", 2.0), "bmct": ("t", 0.0)}  # chassis suffix, window middle


def line_mean(pts, a, b, n=100):
    """Mean over [a, b) of the line through pts (sorted (t, w)), held at the ends."""
    ts, s = [p[0] for p in pts], 0.0
    for k in range(n):
        t = a + (k + 0.5) * (b - a) / n
        i = bisect.bisect_right(ts, t)
        if i == 0 or i == len(pts):
            s += pts[min(i, len(pts) - 1)][1]
            continue
        (t0, w0), (t1, w1) = pts[i - 1], pts[i]
        s += w0 + (w1 - w0) * (t - t0) / (t1 - t0) if t1 > t0 else w1
    return s / n


def main():
    work = sys.argv[1]
    idle, slope, expo, lag, disk_w = map(float, sys.argv[2:7]) if len(sys.argv) > 6 else \
        (100, 150, 1.4, 2, 0.5)
    answers = list(csv.DictReader(open(f"{work}/bmc-answers.csv")))
    print(f"{'':6} {'node':4} {'sample t':>9} {'observed':>9} {'whole s':>9} {'ergd':>9}")
    for v, (suffix, middle) in VARIANTS.items():
        d = f"{work}/{v}"
        if not os.path.isdir(d):
            continue
        for n in ("n1", "n2"):
            fit = json.load(open(f"{d}/fit-{n}.json"))
            held, idle_fit = heldout_cells(f"{d}/data/journal/{n}.csv", fit), fit["idle_watts"]
            cpu, disk = truth_bins(truth_rows(f"{work}/truth.csv", n), int(held[0][0]) - 1,
                                   int(held[-1][0] + held[-1][1]) + 1, lag,
                                   lambda u: slope * u ** expo, lambda b: disk_w * b / 1e6)
            dyn = [(t, st, y) for t, st, y in held if y - idle_fit >= max(5.0, 0.1 * idle_fit)]
            truth = [idle + sum(cpu.get(k, 0) + disk.get(k, 0) for k in range(int(t), int(t + st))) / st
                     for t, st, _ in dyn]

            def mape(pts):
                return 100 * sum(abs(p - line_mean(pts, t, t + st)) / (y - idle_fit)
                                 for p, (t, st, y) in zip(truth, dyn)) / len(dyn)
            a = [r for r in answers if f"/Chassis/{n}{suffix}/" in r["uri"]]
            sample = [float(r["sample_unix_seconds"]) for r in a]
            watts = [float(r["watts"]) for r in a]
            # A 5-sample mean's middle: two sample periods before its last.
            act = [s - lag - middle * 1.0275 for s in sample]
            seen = dict(zip(act, watts))
            ideal = mape(sorted(seen.items()))
            if v == "bmct":
                obs = [math.floor(s - 3600.4) for s in sample]  # its whole-second ReadingTime
            else:
                obs = [float(r["answer_unix_seconds"]) for r in a]
            c = sum(o - x for o, x in zip(obs, act)) / len(a)
            placed = mape(sorted((o - c, w) for o, w in zip(obs, watts)))
            whole = min(mape(sorted((o - L, w) for o, w in zip(obs, watts)))
                        for L in range(math.floor(c) - 1, math.floor(c) + 3))
            cells = floor(d, n, fit, idle, slope, expo, lag, disk_w)
            print(f"{v:6} {n:4} {ideal:9.2f} {placed:9.2f} {whole:9.2f} "
                  f"{cells['dynamic_percent'] if cells else math.nan:9.2f}")


if __name__ == "__main__":
    main()
