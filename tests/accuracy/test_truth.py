# SPDX-License-Identifier: GPL-3.0-or-later
"""truth.py's window on a made-up truth log (docs/accuracy.md, "How the
truth is computed"): erg-pdusim's rows every 0.5 s at a phase that is not
a bin's edge (0.087 s past the second, as in the full run of 2026-11-29,
and others), each hold showing the load of its time minus the lag. The
truth of the activity window [t0, t1) must be the exact integral of that
load over those instants — a load that starts or stops inside a hold at
the window's edge counts for the part inside only — and windows must add
up (no hold counted twice or lost between [t0, tm) and [tm, t1)). Before
git errbars7 a hold went whole to the bin of its middle: the window's
edges moved by up to half a hold, -13 J per edge here at 150 W.
usage: test_truth.py (no arguments; a temporary directory)"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Samples, job_truth, meter_energy, shown_energy, truth_bins, truth_rows  # noqa: E402

IDLE, SLOPE, EXPO, LAG, T0, W = 100.0, 150.0, 1.4, 2.0, 1_800_000_000, 40


def dyn(u):
    return SLOPE * u ** EXPO


def log(path, phase, load):
    """A truth CSV of node n1: rows every 0.5 s from T0 - 10 + phase; the
    hold from row time r shows load(r - LAG) (the load of [r - LAG, r -
    LAG + 0.5)), as erg-pdusim's lag pick does. Returns the row times."""
    times, e = [T0 - 10 + phase + 0.5 * k for k in range(int((W + 20) / 0.5))], 0.0
    with open(path, "w") as f:
        f.write("time_unix_seconds,node,util,lagged_util,watts,energy_joules\n")
        for i, r in enumerate(times):
            u = load(r - LAG)
            w = IDLE + dyn(u)
            f.write(f"{r:.3f},n1,{u:.6f},{u:.6f},{w:.3f},{e:.3f}\n")
            e += w * 0.5
    return times


def check(work):
    bad = []
    t0, t1 = T0, T0 + W
    for phase in (0.087, 0.25, 0.413):
        path = f"{work}/truth-{phase}.csv"
        # Busy (u = 1) for the activity of the holds from the one that
        # straddles t0 to the one that straddles t1 - 5: the window holds
        # [t0, t1 - 5 + the straddling hold's part past t1 - 5) of it.
        a = t0 - 0.5 + phase % 0.5           # the hold straddling t0 starts here
        b = t1 - 5 - 0.5 + phase % 0.5 + 0.5  # and the one straddling t1 - 5 ends here
        log(path, phase, lambda s: 1.0 if a - 1e-6 <= s < b - 1e-6 else 0.0)
        rows = truth_rows(path, "n1")
        want = dyn(1.0) * (b - t0)
        cpu, _ = truth_bins(rows, t0, t1, LAG, dyn)
        got = sum(cpu.values())
        if abs(got - want) > 1e-6:
            bad.append(f"phase {phase}: truth of [t0, t1) {got:.3f} J, want {want:.3f} (the load's "
                       f"{b - t0:.3f} s inside the window at {dyn(1.0):.0f} W)")
        # Windows add up: [t0, tm) + [tm, t1) == [t0, t1), tm inside a hold.
        for tm in (t0 + 7, t0 + 13):
            c1, _ = truth_bins(rows, t0, tm, LAG, dyn)
            c2, _ = truth_bins(rows, tm, t1, LAG, dyn)
            if abs(sum(c1.values()) + sum(c2.values()) - got) > 1e-6:
                bad.append(f"phase {phase}: [t0, {tm - t0}) + [{tm - t0}, t1) = "
                           f"{sum(c1.values()) + sum(c2.values()):.3f} J, [t0, t1) {got:.3f}")
            if any(not (t0 <= k < tm) for k in c1):
                bad.append(f"phase {phase}: a bin outside [t0, tm): {sorted(c1)[:3]}...")
        # What the meter showed over the window is its energy counter over
        # the same instants moved by the lag.
        energy, _ = meter_energy(path)
        shown, counter = shown_energy(rows, t0, t1, LAG), energy("n1", t1 + LAG) - energy("n1", t0 + LAG)
        if abs(shown - counter) > 1e-3:
            bad.append(f"phase {phase}: shown {shown:.3f} J, the counter over [t0, t1) + lag {counter:.3f}")
        # A job with all the node's CPU time gets the whole truth.
        with open(f"{work}/cpu.csv", "w") as f:
            f.write("time,busy_s,jobA_s\n")
            for k in range(-20, 2 * W + 20):
                f.write(f"{t0 + k / 2:.3f},{k / 2:.3f},{k / 2:.3f}\n")
        tj = job_truth(cpu, {}, Samples(f"{work}/cpu.csv"), ["jobA"])["jobA"]
        if abs(tj - got) > 1e-6:
            bad.append(f"phase {phase}: the only job's truth {tj:.3f} J, the node's {got:.3f}")
    return bad


def main():
    with tempfile.TemporaryDirectory(prefix="erg-truth.") as work:
        bad = check(work)
    if bad:
        print("FAIL: " + "; ".join(bad))
        sys.exit(1)
    print("ok: truth.py's window is the activity of exactly [t0, t1) at hold phases 0.087, 0.25, 0.413 s")


if __name__ == "__main__":
    main()
