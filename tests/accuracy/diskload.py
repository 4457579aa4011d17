# SPDX-License-Identifier: GPL-3.0-or-later
"""Block I/O load for the accuracy harness: writes FILE with O_DIRECT (so
the bytes reach the block layer in this process, where erg-agent's BPF
and /proc/PID/io count them, and not in a writeback thread) at the rates
of a schedule "MBPS:SECONDS,..." (MBPS in 1e6 bytes/s; 0 = pause), paced
every 10 ms, in 1 MiB blocks cycling over a 64 MiB region.
args: FILE SCHEDULE"""
import mmap, os, sys, time

path, schedule = sys.argv[1], sys.argv[2]
BLOCK, REGION = 1 << 20, 64
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT wants
block = 0
for step in schedule.split(","):
    rate, seconds = (float(x) for x in step.split(":"))
    t0, written = time.monotonic(), 0
    while (now := time.monotonic()) - t0 < seconds:
        if rate > 0 and written < rate * 1e6 * (now - t0):
            os.pwrite(fd, buf, (block % REGION) * BLOCK)
            block += 1
            written += BLOCK
        else:
            time.sleep(0.01)
os.close(fd)
