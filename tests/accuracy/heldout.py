# SPDX-License-Identifier: GPL-3.0-or-later
"""The held-out error a perfect model cannot avoid against a meter
(docs/accuracy.md, "The held-out MAPE's floor"), for report.py.

`erg fit` validates on the last quarter of a node's usable journal cells:
MAPE total = mean |P^ - y| / y, dynamic = mean |P^ - y| / (y - idle) over
the cells with y - idle >= max(5 W, 10 % of idle), y the cell's measured
power. y is the meter's reading as ergd put it in the cell, not the node's
power: a BMC's 1 W quantum, 1 s samples of a power that moves by watts
between them, answers 1-3 s late placed by a lag in whole seconds, a 5 s
moving average that spreads a load step over the neighbouring cells: each
cell's y is off the true power by some watts, which no model of the
activity can predict. The floor is that part: the MAPE of the simulator's
own noiseless model (idle + slope * util^exponent + disk, the truth of
report.py) against the same held-out cells, with the same denominators. By
the triangle inequality |P^ - y| <= |P^ - P| + |P - y|, so a model whose
error against the true power P is within the goal gets a held-out MAPE
within goal + floor; one above that is worse than the goal for certain."""
import math

from truth import truth_bins, truth_rows

# Journal row flags that make a cell unusable to the fit (fit/erg_fit.h:
# meter or agent missing, estimated, idle, lag unsure, shared).
UNUSABLE = 1 | 2 | 4 | 8 | 16 | 64


def heldout_cells(journal, fit):
    """The cells erg fit held out: (time, step, measured W), from the node's
    journal (time-ordered usable rows of the fit's training span; the last
    quarter, rounded as fit.c does)."""
    first = fit["training"]["first_unix_seconds"]
    last = fit["training"]["last_unix_seconds"]
    rows, times, avg = [], set(), 0.0
    for l in open(journal).read().split("\n"):
        if l.startswith("# erg-journal") and " average_seconds=" in l:
            avg = float(l.split(" average_seconds=")[1].split()[0])
        f = l.split(",")
        if len(f) < 4 or l.startswith(("#", "time")):
            continue
        t, step, y, flags = float(f[0]), float(f[1]), float(f[2]), int(float(f[3]))
        times.add(t)
        if first <= t <= last and not flags & UNUSABLE and math.isfinite(y):
            rows.append((t, step, y))
    # An averaging meter's rows are fitted on features smoothed over the
    # cells its window reaches (fit/smooth.c): a row without them is not.
    if avg > 1:
        k = lambda step: int(math.ceil(avg / 2 / step))
        rows = [r for r in rows
                if all(r[0] + j * r[1] in times for j in range(-k(r[1]), k(r[1]) + 1))]
    n = int(math.floor(0.25 * len(rows) + 0.5))
    return rows[len(rows) - n:]


def floor(work, node, fit, idle, slope, expo, lag, disk_w):
    """{"total_percent", "dynamic_percent", "cells", "cells_dynamic"}: a
    perfect model's held-out MAPE against this meter's cells (work's
    data/journal/NODE.csv and truth.csv); None where the cells found are not
    the fit's (another journal, rows since rotated)."""
    v = fit["validation"]
    held = heldout_cells(f"{work}/data/journal/{node}.csv", fit)
    if not held or len(held) != v["cells"]:
        return None
    cpu, disk = truth_bins(truth_rows(f"{work}/truth.csv", node), int(held[0][0]) - 1,
                           int(held[-1][0] + held[-1][1]) + 1, lag,
                           lambda u: slope * u ** expo, lambda d: disk_w * d / 1e6)
    idle_fit = fit["idle_watts"]
    st = sd = 0.0
    nt = nd = 0
    for t, step, y in held:
        # The cell [t, t + step) of activity: the truth's 1 s bins in it.
        p = idle + sum(cpu.get(k, 0.0) + disk.get(k, 0.0)
                       for k in range(int(t), int(t + step))) / step
        e = abs(p - y)
        if y > 0:
            st += e / y
            nt += 1
        dyn = y - idle_fit
        if dyn >= max(5.0, 0.10 * idle_fit) and dyn > 0:  # fit.c's default threshold
            sd += e / dyn
            nd += 1
    if nd != v.get("cells_dynamic", nd):
        return None
    return {"total_percent": 100 * st / nt if nt else None,
            "dynamic_percent": 100 * sd / nd if nd else None,
            "cells": len(held), "cells_dynamic": nd}
