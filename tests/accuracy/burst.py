# SPDX-License-Identifier: GPL-3.0-or-later
"""Bursty light CPU load for tests/accuracy/light_load.sh: one process that
runs a new level every PERIOD seconds, drawn with SEED from LEVELS (fractions
of one CPU), for SECONDS in all; each level is a duty cycle of 20 ms slices
(busy for level x 20 ms, then asleep), so the load changes within a cell
as shells, daemons and interactive jobs do (issue 38).
args: SEED SECONDS PERIOD LEVEL,LEVEL,..."""
import random, sys, time

seed, seconds, period = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
levels = [float(x) for x in sys.argv[4].split(",")]
r = random.Random(seed)
SLICE = 0.02
end = time.monotonic() + seconds
while (now := time.monotonic()) < end:
    level, until = r.choice(levels), min(end, now + period)
    while (t := time.monotonic()) < until:
        busy = t + SLICE * level
        while level > 0 and time.monotonic() < busy:
            pass
        rest = t + SLICE - time.monotonic()
        if rest > 0:
            time.sleep(rest)
