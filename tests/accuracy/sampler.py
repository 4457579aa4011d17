"""Samples, every 0.5 s, a virtual node's busy CPU time (its cgroup2
cpu.stat usage_usec, which erg-pdusim turns into utilisation) and each job's
CPU time (the usage_usec of the job's own cgroup under the node: exact, and
it keeps the time of the job's exited processes).
args: OUT NODE_CGROUP_DIR NAME=JOB_CGROUP_DIR...; writes time,busy_s,total_s,<name>_s,..."""
import os, sys, time

out, cgdir = sys.argv[1], sys.argv[2]
jobs = [a.split("=", 1) for a in sys.argv[3:]]

def usage_s(d):
    try:
        for l in open(f"{d}/cpu.stat"):
            if l.startswith("usage_usec "):
                return int(l.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0

with open(out, "w") as f:
    f.write("time,busy_s,total_s," + ",".join(f"{n}_s" for n, _ in jobs) + "\n")
    while True:
        b, t = usage_s(cgdir), time.monotonic() * os.cpu_count()
        f.write(f"{time.time():.3f},{b:.3f},{t:.2f}," +
                ",".join(f"{usage_s(d):.3f}" for _, d in jobs) + "\n")
        f.flush()
        time.sleep(0.5)
