# SPDX-License-Identifier: GPL-3.0-or-later
"""heldout.py (the held-out MAPE's floor, docs/accuracy.md) on a made-up
node: a truth log with one load per 5 s cell and a journal of 40 usable
cells (plus flagged ones the fit skips). A meter whose cells are the true
power has floor 0; one whose cells each hold the previous cell's power (a
reading placed a cell late) has the floor |P(i) - P(i-1)| / (y(i) - idle)
over the held-out quarter; a fit whose held-out count differs gets none.
usage: test_heldout.py (no arguments; a temporary directory)"""
import json
import math
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import floor  # noqa: E402

IDLE, SLOPE, EXPO, LAG, DISK_W, T0 = 100.0, 150.0, 1.4, 2.0, 0.5, 1_800_000_000


def power(u):
    return IDLE + SLOPE * u ** EXPO


def main():
    with tempfile.TemporaryDirectory(prefix="erg-heldout.") as work:
        check(work)


def check(work):
    r = random.Random(3)
    util = [r.choice([0.2, 0.4, 0.6, 0.8, 1.0]) for _ in range(60)]
    os.makedirs(f"{work}/data/journal")
    with open(f"{work}/truth.csv", "w") as f:
        f.write("time_unix_seconds,node,util,lagged_util,watts,energy_joules,"
                "lagged_disk_bytes_per_second\n")
        for k in range(2 * 5 * 60):  # every 0.5 s; power LAG s after its activity
            t = T0 + 0.5 * k
            u = util[min(59, max(0, int((t - LAG - T0) // 5)))]
            f.write(f"{t:.3f},n1,{u:.6f},{u:.6f},{power(u):.3f},0,0\n")
            f.write(f"{t:.3f},n2,0,0,100,0,0\n")  # another node: not read

    def journal(shift):
        """Usable cells 2..41 (cell i: y = the true power of cell i - shift),
        and cells flagged 16 (lag unsure) between them, which the fit skips."""
        with open(f"{work}/data/journal/n1.csv", "w") as f:
            f.write("# erg-journal v1 node=n1 step_seconds=5\n"
                    "time_unix_seconds,step_seconds,measured_watts,flags\n")
            for i in range(2, 42):
                f.write(f"{T0 + 5 * i},5,{power(util[i - shift]):.3f},0\n")
                if i % 7 == 0:
                    f.write(f"{T0 + 5 * i + 1},5,500,16\n")
            f.write(f"{T0 + 5 * 50},5,500,0\n")  # after the fit's span

    fit = {"training": {"first_unix_seconds": T0 + 10, "last_unix_seconds": T0 + 5 * 41},
           "validation": {"cells": 10, "cells_dynamic": 10}, "idle_watts": IDLE}
    args = (IDLE, SLOPE, EXPO, LAG, DISK_W)
    journal(0)
    f0 = floor(work, "n1", fit, *args)
    assert f0 and f0["cells"] == 10 and f0["dynamic_percent"] < 0.01, f"true cells: {f0}"
    journal(1)
    f1 = floor(work, "n1", fit, *args)
    held = range(32, 42)  # the last quarter of cells 2..41
    want = 100 * sum(abs(power(util[i]) - power(util[i - 1])) / (power(util[i - 1]) - IDLE)
                     for i in held) / len(held)
    want_total = 100 * sum(abs(power(util[i]) - power(util[i - 1])) / power(util[i - 1])
                           for i in held) / len(held)
    assert want > 5, f"the made-up loads change too little: {want}"
    assert math.isclose(f1["dynamic_percent"], want, rel_tol=1e-3), f"{f1} want {want}"
    assert math.isclose(f1["total_percent"], want_total, rel_tol=1e-3), f"{f1} want {want_total}"
    fit["validation"]["cells"] = 11
    assert floor(work, "n1", fit, *args) is None, "a floor from cells that are not the fit's"
    print(f"ok: floor 0 on true cells, {f1['dynamic_percent']:.2f} % (want {want:.2f}) a cell late")


if __name__ == "__main__":
    main()
