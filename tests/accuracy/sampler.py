"""Samples, every 0.5 s, a virtual node's busy CPU time (its cgroup2
cpu.stat usage_usec, which erg-pdusim turns into utilisation) and the CPU
time of processes by name (/proc/PID/stat utime+stime, summed over live
processes of that name, kept monotonic across exits).
args: OUT CGROUP_DIR NAME...; writes time,busy_s,total_s,<name>_s,..."""
import os, sys, time

out, cgdir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
hz = os.sysconf("SC_CLK_TCK")
seen = {}  # pid -> (name, last ticks)
done = {n: 0 for n in names}  # ticks of exited processes

def machine():
    for l in open(f"{cgdir}/cpu.stat"):
        if l.startswith("usage_usec "):
            return int(l.split()[1]) / 1e6, time.monotonic() * os.cpu_count()
    return 0.0, 0.0

def procs():
    live = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            s = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        if comm in done:
            f = s[s.rindex(")") + 2:].split()
            live[pid] = (comm, int(f[11]) + int(f[12]))
    for pid, (n, t) in seen.items():
        if pid not in live:
            done[n] += t
    seen.clear()
    seen.update(live)
    tot = dict(done)
    for n, t in live.values():
        tot[n] += t
    return [tot[n] / hz for n in names]

with open(out, "w") as f:
    f.write("time,busy_s,total_s," + ",".join(f"{n}_s" for n in names) + "\n")
    while True:
        b, t = machine()
        f.write(f"{time.time():.3f},{b:.2f},{t:.2f}," + ",".join(f"{x:.2f}" for x in procs()) + "\n")
        f.flush()
        time.sleep(0.5)
