#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Exited processes keep their cgroup after the cgroup is gone: a Slurm-like
# job_<id>/step_0 cgroup under a scope is created, runs a burst of short
# processes and is removed, all between two sweeps of an agent scoped to the
# parent (eBPF path). Every exited process must carry the step's path and
# the job key and count under the scope (the agent used to resolve an
# exited process's cgroup id only by walking the tree: the step was gone,
# the process had no path, and the scope dropped it). Real cgroups.
set -euo pipefail
AGENT=$1 BURNER=$2
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: creating cgroups needs root"; exit 77; }
[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: kernel without BTF"; exit 77; }
v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$v2" ] && [ -r "$v2/cpu.stat" ] || { echo "SKIP: no cgroup2 mount with cpu.stat"; exit 77; }
scope=erg-xc-$$
job=$((4000 + $$ % 1000))
step=$scope/job_$job/step_0
name=xc$$
work=$(mktemp -d /tmp/erg-xc.XXXXXX)
agent=
cleanup() {
  [ -n "$agent" ] && kill "$agent" 2>/dev/null
  for d in "$step" "$scope/job_$job" "$scope"; do rmdir "$v2/$d" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$v2/$scope"
# The step must live and die between two drains, after the agent's first
# sweep (its baseline: exits drained then are not reported). A fixed sleep
# after the agent's start did not ensure either on a loaded machine: the
# agent's start (loading and verifying the eBPF programs) could outlast
# it, so the first processes exited into the baseline, and the burst could
# outlast the interval, so a drain found the step still there. Instead: the
# first sample (line 2 of --dump; the sweep before it is the baseline)
# says the agent is in its 2 s wait for the next sweep; it is stopped
# (SIGSTOP: the kernel still records the exits) until the step is gone,
# so no sweep of it sees the step, and its last sweep drains the exits.
"$AGENT" --dump --count 2 --interval 2 --collection bpf --node xc --scope "/$scope" \
  >"$work/out.json" 2>"$work/log" &
agent=$!
for _ in $(seq 600); do
  grep -q '"type": *"sample"' "$work/out.json" && break
  kill -0 $agent 2>/dev/null || break
  sleep 0.05
done
grep -q '"type": *"sample"' "$work/out.json" || { echo "FAIL: no first sample"; cat "$work/log"; exit 1; }
kill -STOP $agent 2>/dev/null || { echo "FAIL: the agent ended before it was stopped"; cat "$work/log"; exit 1; }
for _ in $(seq 500); do [ "$(awk '{ print $3 }' /proc/$agent/stat)" = T ] && break; sleep 0.01; done
# Stopped in the wait after its first sample (2 s for this script to get
# here), not after a second one.
[ "$(grep -c '"type": *"sample"' "$work/out.json")" = 1 ] ||
  { echo "FAIL: the agent was stopped after its second sample, not before"; exit 1; }
mkdir -p "$v2/$step"
truth=$(sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" 100 5 "$3" 2' sh "$v2/$step" "$BURNER" "$name")
rmdir "$v2/$step" "$v2/$scope/job_$job"
gone=$(date +%s%N)
kill -CONT $agent
wait $agent || { cat "$work/log"; exit 1; }
agent=
python3 - "$work/out.json" "$truth" "$name" "/$step" "$job" "$gone" <<'PY'
import json, sys
path, truth, name, step, job, gone = sys.argv[1:7]
truth, gone = int(truth), int(gone)
samples = [o for o in map(json.loads, open(path)) if o["type"] == "sample"]
mine = [(s, p) for s in samples for p in s["procs"] if p["comm"] == name]
# The test only means something if the step was gone before the drain
# that handed over its exits (the agent was stopped before the step was
# made: only a stop that came after the next sweep began fails here).
assert all(s["realtime_end_ns"] > gone for s, _ in mine), "the step outlived a drain"
procs = [p for _, p in mine]
pids = {p["pid"] for p in procs}
got = sum(p["cpu_ns"] for p in procs)
print(f"{len(pids)} of 100 processes under the scope, {got/1e9:.3f} s of {truth/1e9:.3f} s")
assert len(pids) == 100, f"only {len(pids)} of 100 exited processes under the scope"
assert all(p["exited"] for p in procs)
bad = [p for p in procs if p["cgroup"] != step or p["job"] != job]
assert not bad, f"{len(bad)} without their cgroup or job: {bad[0]}"
assert 0.97 * truth <= got <= 1.05 * truth, (got, truth)
# The scope's own accounting keeps a removed child's time: it is the
# processes', not [system].
for s in samples:
    busy, sumprocs = s["totals"]["cpu_busy_ns"], sum(p["cpu_ns"] for p in s["procs"])
    assert abs(busy - sumprocs) <= 0.1 * busy + 20e6, (busy, sumprocs)
print(f"ok: all carry {step} and job {job}")
PY
