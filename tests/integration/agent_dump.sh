#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-agent --dump: one JSON object per line, every field, and a busy
# process of ours shows up with about the CPU time it burned.
set -euo pipefail
AGENT=$1
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
out=$(mktemp)
sha256sum /dev/zero &
burner=$!
trap 'rm -f "$out"; kill $burner 2>/dev/null || true' EXIT
for collection in proc bpf; do
if [ $collection = bpf ] && { [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; }; then
  echo "SKIP: the bpf path needs root and BTF"; exit 77
fi
"$AGENT" --dump --count 3 --interval 1 --node dump-node --collection $collection >"$out"
python3 - "$out" "$burner" "$collection" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
burner = int(sys.argv[2])
objs = [json.loads(l) for l in lines]
assert objs[0]["type"] == "hello" and objs[0]["collection"] == sys.argv[3], objs[0]
hello = objs[0]
assert "cpu_time" in hello["features"]
assert hello["ncpu"] >= 1 and hello["agent_start_realtime_ns"] > 1.6e18, hello
# Every eBPF feature is either measured or off with a reason (the /proc
# path lists none off: its fallback line says why).
ebpf = {"cpu_time", "freq", "capacity", "wakeups", "migrations", "blkio", "cycles",
        "instructions", "llc_misses"}
off = hello["features_off"]
if sys.argv[3] == "bpf":
    assert set(off) | (set(hello["features"]) & ebpf) == ebpf, (off, hello["features"])
    assert not set(off) & set(hello["features"]), (off, hello["features"])
    assert all(isinstance(v, str) and len(v) > 5 for v in off.values()), off
else:
    assert off == {}, off
samples = [o for o in objs if o["type"] == "sample"]
assert len(samples) == 3, len(samples)
for i, s in enumerate(samples):
    assert s["node"] == "dump-node" and s["seq"] == i + 1
    assert s["realtime_end_ns"] > s["realtime_start_ns"]
    assert s["monotonic_end_ns"] > s["monotonic_start_ns"]
    assert s["totals"]["ncpu"] >= 1
    for k in ("cpu_busy_ns", "mem_used_bytes", "net_rx_bytes"):
        assert k in s["totals"], k
    # The eBPF path's health counters (deltas), and nothing of them on /proc.
    if sys.argv[3] == "bpf":
        # Node busy time and the processes cover the same time (both cut at
        # the drain), so the processes never exceed it: busy = Σ + [system]
        # up to /proc/stat's 10 ms ticks per CPU. Totals read before the
        # drain gave up to 400 ms more to the processes on a loaded node.
        busy = s["totals"]["cpu_busy_ns"]
        over = sum(p["cpu_ns"] for p in s["procs"]) + s["system_cpu_ns"] - busy
        assert over <= 0.02 * busy + 10e6 * s["totals"]["ncpu"] + 5e6, (over, busy)
        assert set(s["bpf"]) == {"map_full_drops", "lost_exit_ns", "unseen_switches",
                                 "unsettled"}, s.get("bpf")
        assert all(isinstance(v, int) and v >= 0 for v in s["bpf"].values()), s["bpf"]
    else:
        assert "bpf" not in s, s["bpf"]
    for p in s["procs"]:
        for k in ("pid", "start_time_ns", "comm", "uid", "cgroup", "cpu_ns", "rss_bytes",
                  "read_bytes", "write_bytes", "job", "unit", "container"):
            assert k in p, k
        # A counter is there exactly when its feature is (no PMU: no cycles,
        # rather than cycles 0).
        for k in ("wakeups", "migrations", "cycles", "instructions", "llc_misses"):
            assert (k in p) == (k in hello["features"]), (k, hello["features"], p)
mine = [p for s in samples for p in s["procs"] if p["pid"] == burner]
assert mine, "the busy process never appeared"
assert all(p["comm"] == "sha256sum" for p in mine)
# A busy loop burns up to 1 s of CPU per 1 s interval (10 ms ticks on the
# /proc path; on the bpf path a slice running at a drain is split exactly
# there); less when other load shares the CPUs, never more. 5 % is the
# jitter of when the sweep reads the counters against its timestamps.
for s in samples:
    wall = (s["monotonic_end_ns"] - s["monotonic_start_ns"]) / 1e9
    for p in s["procs"]:
        if p["pid"] == burner:
            assert p["cpu_ns"] / 1e9 <= 1.05 * wall, (s["seq"], p["cpu_ns"], wall)
cpu = max(p["cpu_ns"] for p in mine) / 1e9
assert 0.2 <= cpu <= 1.05, cpu
assert all(s["collection"] == sys.argv[3] for s in samples)
print("ok: %s: %d samples, busy process seen with %.2f s CPU" % (sys.argv[3], len(samples), cpu))
PY
done
kill $burner 2>/dev/null || true
