#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Exit capture through the agent: 500 processes that each burn ~20 ms and
# exit inside an interval are charged to their command on the eBPF path
# (99-100.2 % of the CPU time wait4 saw; the issue asks >= 99 %). Also: the
# forced /proc fallback says so, and without CAP_BPF the agent falls back by
# itself with one clear line.
set -euo pipefail
AGENT=$1 BURNER=$2
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for BPF"; exit 77; }
[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: kernel without BTF"; exit 77; }
work=$(mktemp -d /tmp/erg-exits.XXXXXX)
trap 'kill $agent 2>/dev/null || true; rm -rf "$work"' EXIT

"$AGENT" --dump --interval 1 --collection bpf --node ex >"$work/bpf.json" 2>"$work/bpf.log" &
agent=$!
sleep 1.5
# Names unique to this run: another burner on the machine must not count.
name=eb$$
many=mb$$
truth=$("$BURNER" 500 20 $name 2)
sleep 2.5
kill $agent; wait $agent || true
python3 - "$work/bpf.json" "$truth" "$name" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
truth = int(sys.argv[2])
hello = objs[0]
assert hello["collection"] == "bpf" and "cpu_time" in hello["features"], hello
# No hardware counters in the feature set unless the PMU exists (VMs: none).
import subprocess
procs = [p for o in objs if o["type"] == "sample" for p in o["procs"] if p["comm"] == sys.argv[3]]
got = sum(p["cpu_ns"] for p in procs)
pids = {p["pid"] for p in procs}
exited = sum(1 for p in procs if p["exited"])
ratio = got / truth
health = {}
for o in objs:
    for k, v in (o.get("bpf") or {}).items() if o["type"] == "sample" else ():
        health[k] = health.get(k, 0) + v
print(f"bpf: {len(pids)} processes, {exited} exit records, {got/1e9:.3f} s of {truth/1e9:.3f} s = {ratio:.4f}; "
      f"eBPF health over the run: {health}")
# Slices are charged as the growth of each thread's sum_exec_runtime since
# its last charge (per-thread records: exact whatever switches another
# session's BPF program hid), the clock wait4's rusage is scaled to (it
# truncates to us: +0.005 % here). The issue's bar is 99 %; the bound is
# 0.998 as before the CPU-state estimate (0.9955 in one CI run) came in.
# A switch the tracepoint missed is repaired from the thread's runtime as of
# the last tick (docs/bpf.md, "unseen switches"): each may misplace up to a
# tick of the kernel's HZ (its config; 100, the coarsest, when unknown).
# 33 of them under the ASan phase's load gave 1.0033.
hz = 100
try:
    import gzip
    for line in gzip.open("/proc/config.gz", "rt"):
        if line.startswith("CONFIG_HZ="):
            hz = int(line.split("=")[1])
except OSError:
    pass
slack = health.get("unseen_switches", 0) * 1e9 / hz / truth
assert ratio >= 0.998 - slack, (ratio, slack)
assert ratio <= 1.002 + slack, (ratio, slack)
assert len(pids) >= 495, len(pids)
PY

# Many processes in one sample (more than the agent's first slot block):
# every one keeps its own name.
"$AGENT" --dump --interval 2 --collection bpf --node ex >"$work/many.json" 2>>"$work/bpf.log" &
agent=$!
sleep 1.2
"$BURNER" 800 2 $many 8 >/dev/null
sleep 3
kill $agent; wait $agent || true
python3 - "$work/many.json" "$many" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
procs = [p for o in objs if o["type"] == "sample" for p in o["procs"]]
biggest = max(len(o["procs"]) for o in objs if o["type"] == "sample")
many = {p["pid"] for p in procs if p["comm"] == sys.argv[2]}
assert biggest > 300, f"largest sample had only {biggest} processes"
assert len(many) >= 790, f"only {len(many)} of 800 processes kept their name"
# (No check on every process's name: integration.churn, beside this test,
# runs processes named with control bytes on purpose.)
print(f"many: {biggest} processes in one sample, {len(many)} named right")
PY

# Forced /proc path: says so in hello and in every sample.
"$AGENT" --dump --count 2 --interval 0.5 --collection proc --node ex >"$work/proc.json" 2>"$work/proc.log"
python3 - "$work/proc.json" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert objs[0]["collection"] == "proc", objs[0]
assert all(o["collection"] == "proc" for o in objs[1:])
print("proc: forced fallback reported")
PY

# Without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN, "auto" falls back with one line.
if command -v setpriv >/dev/null; then
  setpriv --bounding-set=-bpf,-perfmon,-sys_admin -- \
    "$AGENT" --dump --count 1 --interval 0.5 --node ex >"$work/auto.json" 2>"$work/auto.log"
  grep -q '"collection":"proc"' "$work/auto.json" || { echo "FAIL: no fallback"; cat "$work/auto.log"; exit 1; }
  n=$(grep -c 'BPF unavailable: .*; using /proc' "$work/auto.log")
  [ "$n" = 1 ] || { echo "FAIL: fallback logged $n times"; cat "$work/auto.log"; exit 1; }
  echo "auto: fell back to /proc without CAP_BPF: $(grep 'BPF unavailable' "$work/auto.log" | cut -d: -f4-)"
else
  echo "SKIP: setpriv (util-linux) missing"; exit 77
fi
