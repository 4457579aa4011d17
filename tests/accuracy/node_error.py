# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a kept run.sh work directory's node-level error came from
(docs/accuracy.md, "Per-job intervals"): each node's dynamic energy over the
evaluation window minus the simulator's truth, split exactly into
  idle   -(idle profile - true idle) x window (the profile's mean is the
         meter's noise over the idle window: erg's idle term),
  noise  what the meter showed over the window's instants (its energy
         counter, moved by the lag) minus the true power: the reading noise
         and rounding over the window (erg's noise term),
  align  erg's measured energy over its cells minus that counter: ergd's
         own cell alignment (lag fraction, poll timing) at the window's edges,
  other  the rest (cells without a reading, the model standing in).
The idle and noise parts are also given in sds of what the simulator drew
(its noise per reading over the idle profile's and the window's readings):
z = (idle + noise) / that sd, which for seed 1 is the same in every run.
Then each job's error minus its share of the node's (E_job/E_node x the
node's error): what the split between the jobs added.
With --seeds A-B: the same idle + noise draw replayed for erg-pdusim's other
seeds (its noise is glibc's rand_r from --seed, Box-Muller, one draw per
node per update in node order: the rows' indices pick the same draws), in
sds — what each seed's nodes will draw in a run of the same schedule
(--raw-seeds: as erg-pdusim drew before git errbars7, the seed itself as
rand_r's state).
usage: node_error.py WORK [T0 T1] [--seeds A-B [--raw-seeds]]   (default window: run.sh's
fetches, their first row to + report.txt's window_seconds; the simulator's
model from pdusim.log)"""
import ctypes
import json
import math
import re
import sys

from truth import Samples, has_ds, job_truth, meter_energy, rrd, rrd_energy, truth_bins, truth_rows

NODES = {"n1": ["jobA", "jobB", "jobC"], "n2": ["jobD", "jobE"]}


def sim_model(work):
    line = next(l for l in open(f"{work}/pdusim.log") if " model idle=" in l)
    get = lambda k: float(re.search(k + r"=([0-9.]+)", line).group(1))  # noqa: E731
    return {k: get(k) for k in ("idle", "slope", "exponent", "disk", "noise", "update", "lag")}


def seed_state(seed):
    """pdusim/sim.c sim_seed_state: the seed through splitmix64's finaliser."""
    m = (1 << 64) - 1
    z = (seed + 0x9e3779b97f4a7c15) & m
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
    return (z ^ (z >> 31)) & 0xffffffff


def sim_normals(seed, n, raw=False):
    """erg-pdusim's first n noise draws for --seed seed (pdusim/sim.c
    sim_normal; raw: the seed itself as rand_r's state, as before git errbars7)."""
    rand_r, st, out = ctypes.CDLL(None).rand_r, ctypes.c_uint(seed if raw else seed_state(seed)), []
    rand_r.argtypes, rand_r.restype = [ctypes.POINTER(ctypes.c_uint)], ctypes.c_int
    for _ in range(n):
        u1 = (rand_r(ctypes.byref(st)) + 1.0) / (2147483647 + 2.0)
        u2 = (rand_r(ctypes.byref(st)) + 1.0) / (2147483647 + 2.0)
        out.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
    return out


def replay(work, m, t0, t1, seeds, raw):
    """Each seed's idle-profile and window draws over this run's rows, in sds."""
    times = [float(l.split(",", 1)[0]) for l in open(f"{work}/truth.csv").readlines()[1:]
             if l.split(",")[1] == "n1"]
    nodes = list(NODES)
    w = t1 - t0
    for seed in seeds:
        out = []
        for k, n in enumerate(nodes):
            prof = json.load(open(f"{work}/idle-{n}.json"))
            a, b = prof["first_unix_seconds"] + m["lag"], prof["last_unix_seconds"] + m["lag"]
            idle = [i for i, t in enumerate(times) if a <= t < b]
            win = [i for i, t in enumerate(times) if t0 + m["lag"] <= t < t1 + m["lag"]]
            z = sim_normals(seed, len(nodes) * (max(win[-1], idle[-1]) + 1), raw)
            e_idle = -w * m["noise"] * sum(z[len(nodes) * i + k] for i in idle) / len(idle)
            e_noise = m["noise"] * m["update"] * sum(z[len(nodes) * i + k] for i in win)
            sd = m["noise"] * math.sqrt(w * w / len(idle) + m["update"] ** 2 * len(win))
            out.append(f"{n} idle {e_idle:+.1f} + noise {e_noise:+.1f} J = {(e_idle + e_noise) / sd:+.2f} sd")
        print(f"seed {seed}: " + "; ".join(out))


def main():
    seeds, raw = None, "--raw-seeds" in sys.argv
    if raw:
        sys.argv.remove("--raw-seeds")
    if "--seeds" in sys.argv:
        i = sys.argv.index("--seeds")
        a, _, b = sys.argv[i + 1].partition("-")
        seeds = range(int(a), int(b or a) + 1)
        del sys.argv[i:i + 2]
    work = sys.argv[1]
    m = sim_model(work)
    keys = sorted(rrd(f"{work}/node-n1.txt"))
    step = keys[1] - keys[0]
    if len(sys.argv) > 3:
        t0, t1 = int(sys.argv[2]), int(sys.argv[3])
    else:
        txt = open(f"{work}/report.txt").read()
        t0 = keys[0]
        t1 = t0 + json.loads(txt[:txt.rindex("}") + 1])["window_seconds"]
    w = t1 - t0
    cpu_w = lambda u: m["slope"] * u ** m["exponent"]  # noqa: E731
    disk_w = lambda d: m["disk"] * d / 1e6  # noqa: E731
    energy, _ = meter_energy(f"{work}/truth.csv")
    print(f"window [{t0}, {t1}) {w} s, step {step} s; simulator {m}")
    for n, jobs in NODES.items():
        cpu, disk = truth_bins(truth_rows(f"{work}/truth.csv", n), t0, t1, m["lag"], cpu_w, disk_w)
        truth = sum(cpu.values()) + sum(disk.values())
        node = {t: r for t, r in rrd(f"{work}/node-{n}.txt").items() if t0 < t <= t1}
        e = sum(r["dynamic"] * step for r in node.values() if not math.isnan(r["dynamic"]))
        meas = sum(r["measured"] * step for r in node.values() if not math.isnan(r["measured"]))
        # The cells' idle (the profile's; a cell below it shows its power
        # there, with no dynamic energy: that difference is in "other").
        idle = sorted(r["idle"] for r in node.values() if not math.isnan(r["idle"]))
        idle = idle[len(idle) // 2]
        counter = energy(n, t1 + m["lag"]) - energy(n, t0 + m["lag"])
        parts = {"idle": -(idle - m["idle"]) * w, "noise": counter - m["idle"] * w - truth,
                 "align": meas - counter}
        parts["other"] = e - truth - sum(parts.values())
        prof = json.load(open(f"{work}/idle-{n}.json"))
        idle_s = prof["last_unix_seconds"] - prof["first_unix_seconds"]
        sd = m["noise"] * math.sqrt((w * w / (idle_s / m["update"])) + w * m["update"])
        half = math.nan
        if has_ds(f"{work}/node-{n}.dyn.txt", "sd"):
            s = rrd_energy(f"{work}/node-{n}.dyn.txt", t0, t1, step, "sd")
            v = rrd_energy(f"{work}/node-{n}.dyn.txt", t0, t1, step, "var")
            half = 1.959964 * math.sqrt(s * s + max(v, 0))
        print(f"{n}: dynamic {e:.1f} J, truth {truth:.1f}, error {e - truth:+.1f} J "
              f"({(e - truth) / half:+.2f} half-widths of erg's +-{half:.1f}) = " +
              " + ".join(f"{k} {v:+.1f}" for k, v in parts.items()) +
              f"; idle + noise {(parts['idle'] + parts['noise']) / sd:+.2f} sd of the simulator's "
              f"draw (sd {sd:.1f} J: {idle_s:.0f} s of idle profile, {w} s of window)")
        tj = job_truth(cpu, disk, Samples(f"{work}/cpu-{n}.csv"), jobs)
        for j in jobs:
            ej = rrd_energy(f"{work}/{n}-{j}.txt", t0, t1, step)
            share = ej / e * (e - truth)
            print(f"   {j}: error {ej - tj[j]:+.1f} J = node's share {share:+.1f} + split {ej - tj[j] - share:+.1f}")
    if seeds:
        replay(work, m, t0, t1, seeds, raw)


if __name__ == "__main__":
    main()
