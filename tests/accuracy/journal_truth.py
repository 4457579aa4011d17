# SPDX-License-Identifier: GPL-3.0-or-later
"""A node's journal cells next to erg-pdusim's own energy (--truth FILE),
for the meter tests of tests/accuracy (coarse_register.sh, coarse_no_power.sh).

    from journal_truth import cells
    for t0, step, watts, true_watts in cells(JOURNAL_CSV, TRUTH_CSV): ...

true_watts is the simulator's energy over the cell (linear between its
updates) / step; cells outside the truth's span are left out, watts may be
NaN (no meter data)."""
import bisect
import csv


def cells(journal, truth_csv):
    rows = [r for r in csv.DictReader(l for l in open(journal) if not l.startswith("#"))]
    truth = [(float(r["time_unix_seconds"]), float(r["energy_joules"]))
             for r in csv.DictReader(open(truth_csv))]
    ts = [t for t, _ in truth]

    def energy(t):
        i = bisect.bisect_left(ts, t)
        if i == 0 or i >= len(ts):
            return None
        (t0, e0), (t1, e1) = truth[i - 1], truth[i]
        return e0 + (e1 - e0) * (t - t0) / (t1 - t0)

    out = []
    for r in rows:
        t0, step = float(r["time_unix_seconds"]), float(r["step_seconds"])
        a, b = energy(t0), energy(t0 + step)
        if a is not None and b is not None:
            out.append((t0, step, float(r["measured_watts"]), (b - a) / step))
    return out
