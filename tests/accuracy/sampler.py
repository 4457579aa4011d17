# SPDX-License-Identifier: GPL-3.0-or-later
"""Samples, every 0.5 s, a virtual node's busy CPU time (its cgroup2
cpu.stat usage_usec, which erg-pdusim turns into utilisation) and each job's
CPU time (the usage_usec of the job's own cgroup under the node: exact, and
it keeps the time of the job's exited processes), and the block I/O bytes
of the node and of each job the way erg-pdusim counts them for its disk
cost: io.stat rbytes + wbytes, or where the cgroup2 group has no io.stat
(io controller on cgroup v1) read_bytes + write_bytes of /proc/PID/io of
the group's processes, a process that left keeping its last count.
args: OUT NODE_CGROUP_DIR NAME=JOB_CGROUP_DIR...; writes
time,busy_s,total_s,<name>_s,...,io_bytes,<name>_io_bytes,..."""
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

class IoCounter:
    def __init__(self, d):
        self.d, self.live, self.gone = d, {}, 0

    def pids(self):
        for root, _, _ in os.walk(self.d):
            try:
                yield from (int(p) for p in open(f"{root}/cgroup.procs").read().split())
            except OSError:
                pass

    def bytes(self):
        try:
            return sum(int(kv.split("=")[1]) for kv in open(f"{self.d}/io.stat").read().split()
                       if kv.startswith(("rbytes=", "wbytes=")))
        except OSError:
            pass
        now = {}
        for p in self.pids():
            try:
                f = dict(l.split(":") for l in open(f"/proc/{p}/io").read().splitlines())
                now[p] = max(self.live.get(p, 0), int(f["read_bytes"]) + int(f["write_bytes"]))
            except (OSError, KeyError, ValueError):
                pass
        self.gone += sum(v for p, v in self.live.items() if p not in now)
        self.live = now
        return self.gone + sum(now.values())

io = [IoCounter(cgdir)] + [IoCounter(d) for _, d in jobs]
with open(out, "w") as f:
    f.write("time,busy_s,total_s," + ",".join(f"{n}_s" for n, _ in jobs) + ",io_bytes," +
            ",".join(f"{n}_io_bytes" for n, _ in jobs) + "\n")
    while True:
        b, t = usage_s(cgdir), time.monotonic() * os.cpu_count()
        f.write(f"{time.time():.3f},{b:.3f},{t:.2f}," +
                ",".join(f"{usage_s(d):.3f}" for _, d in jobs) + "," +
                ",".join(str(c.bytes()) for c in io) + "\n")
        f.flush()
        time.sleep(0.5)
