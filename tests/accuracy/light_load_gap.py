# SPDX-License-Identifier: GPL-3.0-or-later
"""The within-sample gap of a light_load.sh run (issue 38; docs/accuracy.md
"Within the agent's samples"): per journal cell, the simulator's own curve
power (slope * util^exponent of each of its updates, noise-free, averaged
over the cell) minus the truth's curve at the cell's journal tails (the
truth projected on the degree-8 tails by least squares), in bins of the
cell's utilisation. A gap near 0 is what a fit from those tails needs;
the meter's mean of a load that changes within the agent's samples shows
up as a positive gap.
args: WORK SLOPE EXPONENT [NODE ...]"""
import bisect, csv, math, statistics, sys

work, slope, expo = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
nodes = sys.argv[4:] or ["io", "cpu"]
DEG = 8


def tails(u):
    b = [math.comb(DEG, j) * u ** j * (1 - u) ** (DEG - j) for j in range(DEG + 1)]
    return [sum(b[i:]) for i in range(1, DEG + 1)]


def project():
    """Least-squares tail coefficients of slope * u^expo on u = 0 … 1."""
    rows = [(tails(k / 2000), slope * (k / 2000) ** expo) for k in range(2001)]
    a = [[sum(t[i] * t[j] for t, _ in rows) for j in range(DEG)] + [sum(t[i] * y for t, y in rows)]
         for i in range(DEG)]
    for c in range(DEG):  # Gauss-Jordan with partial pivoting
        p = max(range(c, DEG), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        for r in range(DEG):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][DEG] / a[i][i] for i in range(DEG)]


coef = project()
truth = {}
for r in csv.DictReader(open(f"{work}/truth.csv")):
    truth.setdefault(r["node"], []).append((float(r["time_unix_seconds"]), float(r["lagged_util"])))
bins = [0, 0.02, 0.05, 0.1, 0.2, 0.4, 1.01]
for node in nodes:
    upd = truth[node]
    ts = [t for t, _ in upd]
    gaps = [[] for _ in bins[:-1]]
    for r in csv.DictReader(l for l in open(f"{work}/data/journal/{node}.csv") if not l.startswith("#")):
        t0, step, ncpu = float(r["time_unix_seconds"]), float(r["step_seconds"]), float(r["ncpu"])
        tl = [float(r[f"node_cpu_utilization_tail8_{i}"]) for i in range(1, DEG + 1)]
        if any(math.isnan(x) for x in tl):
            continue
        # The simulator's updates whose span lies in the cell: each shows the
        # curve at its own utilisation from its time until the next.
        i0, i1 = bisect.bisect_right(ts, t0), bisect.bisect_right(ts, t0 + step)
        if i0 == 0 or i1 >= len(ts):
            continue
        e = sum(slope * upd[i][1] ** expo * (min(ts[i + 1], t0 + step) - max(ts[i], t0))
                for i in range(i0 - 1, i1) if ts[i + 1] > t0)
        u = float(r["cpu_seconds_per_second"]) / ncpu
        k = bisect.bisect_right(bins, u) - 1
        gaps[k].append(e / step - sum(c * x for c, x in zip(coef, tl)))
    print(f"{node}: true curve power minus the truth at the cell's journal tails, W")
    for k, g in enumerate(gaps):
        if g:
            print(f"  u {bins[k]:.2f}-{bins[k + 1]:.2f}: {len(g):3d} cells, mean {statistics.fmean(g):+.3f} W, "
                  f"sd {statistics.pstdev(g):.3f} W")
