# SPDX-License-Identifier: GPL-3.0-or-later
"""Ground truth of the accuracy harnesses (definitions: docs/accuracy.md, "How
the truth is computed") from erg-pdusim --truth and sampler.py, and erg's
energies from `rrdtool fetch` output. Used by report.py (run.sh) and
shared_report.py (shared.sh)."""
import bisect
import math


def rrd(path):
    """`rrdtool fetch` output as {time: {ds: value}} ({} if missing)."""
    try:
        lines = open(path).read().split("\n")
    except OSError:
        return {}
    names, out = lines[0].split(), {}
    for l in lines[1:]:
        if ":" in l:
            t, v = l.split(":", 1)
            vals = [math.nan if x in ("-nan", "nan") else float(x) for x in v.split()]
            out[int(t)] = dict(zip(names, vals))
    return out


def has_ds(path, ds):
    """Whether `rrdtool fetch` output at path has the data source ds."""
    try:
        with open(path) as f:
            return ds in f.readline().split()
    except OSError:
        return False


def rrd_energy(path, t0, t1, step, ds="watts"):
    """Sum of the stored cell powers of ds x step over the cells in (t0, t1]."""
    return sum(r[ds] * step for t, r in rrd(path).items()
               if t0 < t <= t1 and not math.isnan(r.get(ds, math.nan)))


def truth_rows(path, node):
    """node's rows of a --truth CSV: (time, lagged_util, lagged disk B/s,
    watts shown). A --sum's rows (util empty) have lagged_util NaN."""
    rows = []
    for l in open(path).readlines()[1:]:
        f = l.strip().split(",")
        if f[1] == node:
            rows.append((float(f[0]), float(f[3]) if f[3] else math.nan,
                         float(f[6]) if len(f) > 6 and f[6] else 0.0, float(f[4])))
    return rows


def holds(rows, t0, t1, lag):
    """Each row's hold (its time to the next row's) moved back by lag to the
    time of the activity it shows, cut at the 1 s bins of [t0, t1): yields
    (when, row, seconds) for each part of a hold inside the bin `when`. The
    window is then the activity of exactly [t0, t1), as erg's cells (moved
    back by ergd's lag) are; a hold that straddles a bin's edge or the
    window's is split by time (before git errbars7 it went whole to the bin
    of its middle, which moved the window's edges by up to half a hold: a
    node's truth off by up to 0.25 s x the power step at each edge, -14 ...
    +17 J on the full run; docs/accuracy.md, "Per-job intervals")."""
    for i in range(len(rows) - 1):
        lo, hi = max(rows[i][0] - lag, t0), min(rows[i + 1][0] - lag, t1)
        while lo < hi:
            when = math.floor(lo)
            end = min(hi, when + 1)
            yield when, rows[i], end - lo
            lo = end


def truth_bins(rows, t0, t1, lag, cpu_watts, disk_watts=lambda d: 0.0):
    """The simulator's dynamic energy per 1 s bin of activity, CPU and disk
    part: cpu_watts(lagged_util) and disk_watts(lagged B/s), without idle,
    noise or quantisation, over each hold, in the bin of its activity."""
    cpu_j, disk_j = {}, {}
    for when, (_, u, d, _), s in holds(rows, t0, t1, lag):
        cpu_j[when] = cpu_j.get(when, 0) + cpu_watts(u) * s
        disk_j[when] = disk_j.get(when, 0) + disk_watts(d) * s
    return cpu_j, disk_j


def shown_energy(rows, t0, t1, lag):
    """What the meter showed (idle, noise and rounding included) over the
    holds whose activity lies in [t0, t1): the energy a lag-compensating
    reader of the meter should give the window."""
    return sum(r[3] * s for _, r, s in holds(rows, t0, t1, lag))


class Samples:
    """sampler.py's CSV: cumulative counters by column name (busy_s, io_bytes,
    JOB_s, JOB_io_bytes), linear between samples."""

    def __init__(self, path):
        lines = open(path).readlines()
        self.cols = {c: i for i, c in enumerate(lines[0].strip().split(","))}
        self.rows = [list(map(float, l.split(","))) for l in lines[1:]]
        self.t = [r[0] for r in self.rows]

    def at(self, name, t):
        col, i = self.cols[name], bisect.bisect_left(self.t, t)
        if i <= 0 or i >= len(self.t):
            return self.rows[min(max(i, 0), len(self.t) - 1)][col]
        a, b = self.rows[i - 1], self.rows[i]
        return a[col] + (b[col] - a[col]) * (t - a[0]) / (b[0] - a[0])


def job_truth(cpu_j, disk_j, samples, jobs):
    """Each bin's CPU part goes to each job by its share of the node's
    (cgroup's) busy CPU time in that bin, the disk part by its share of the
    node's block I/O bytes (sampler.py counts both as erg-pdusim does)."""
    out = {j: 0.0 for j in jobs}
    for parts, total, suffix in ((cpu_j, "busy_s", "_s"), (disk_j, "io_bytes", "_io_bytes")):
        for s, d in parts.items():
            busy = samples.at(total, s + 1) - samples.at(total, s)
            for j in jobs:
                if busy > 0 and d > 0:
                    c = j + suffix
                    out[j] += d * min(1.0, (samples.at(c, s + 1) - samples.at(c, s)) / busy)
    return out


def meter_energy(path):
    """The meters' energy counters of a --truth CSV: energy(name, t), the
    joules a meter showed up to t (between updates it holds the power it
    showed, so energy grows linearly at that power), and its first and last
    update times, span(name)."""
    units = {}
    for l in open(path).readlines()[1:]:
        f = l.strip().split(",")
        units.setdefault(f[1], []).append((float(f[0]), float(f[5]), float(f[4])))

    def energy(name, t):
        u = units[name]
        k = bisect.bisect_right([r[0] for r in u], t) - 1
        assert 0 <= k < len(u) - 1, f"{t} outside the truth log of {name}"
        return u[k][1] + u[k][2] * (t - u[k][0])

    def span(name):
        return units[name][0][0], units[name][-1][0]
    return energy, span


def mean_watts(energy, name, t0, step):
    """A meter's mean power over [t0, t0 + step) from meter_energy's energy."""
    return (energy(name, t0 + step) - energy(name, t0)) / step
