#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A busy process moved to another cgroup is reported under the new one
# within a sample or so. The eBPF path keeps a live process's cgroup and
# keys between sweeps (node-agent/identcache.c) instead of reading
# /proc/PID/cgroup every time: this fails if that cache served the old
# identity after the move. Real cgroups, eBPF path.
set -euo pipefail
AGENT=$1 BURNER=$2
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: creating cgroups needs root"; exit 77; }
[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: kernel without BTF"; exit 77; }
v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$v2" ] && [ -w "$v2/cgroup.procs" ] || { echo "SKIP: no writable cgroup2 mount"; exit 77; }
top=erg-im-$$
name=im$$
work=$(mktemp -d /tmp/erg-im.XXXXXX)
agent= burner=
cleanup() {
  # (|| true: the burner may be gone already, and set -e holds in here)
  [ -z "$agent" ] || kill "$agent" 2>/dev/null || true
  [ -z "$burner" ] || { pkill -P "$burner" 2>/dev/null; kill "$burner" 2>/dev/null; } || true
  wait 2>/dev/null || true
  # Back to the root, so the test's cgroups can go.
  for d in a/job_1 b/job_2; do
    [ -f "$v2/$top/$d/cgroup.procs" ] || continue
    while read -r p; do echo "$p" >"$v2/cgroup.procs" 2>/dev/null || true; done <"$v2/$top/$d/cgroup.procs"
  done
  for d in a/job_1 b/job_2 a b ""; do rmdir "$v2/$top/$d" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$v2/$top/a/job_1" "$v2/$top/b/job_2"
# One child burning 12 s of CPU, started in a/job_1.
sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" 1 12000 "$3" 1' sh "$v2/$top/a/job_1" "$BURNER" "$name" \
  >/dev/null &
burner=$!
"$AGENT" --dump --interval 0.5 --collection bpf --node im >"$work/out.json" 2>"$work/log" &
agent=$!
# Its samples: (realtime start, end, cgroup, job) of the child.
samples() {
  python3 - "$work/out.json" "$name" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue  # a line being written
    if o.get("type") != "sample":
        continue
    for p in o["procs"]:
        if p["comm"] == sys.argv[2] and not p.get("exited"):
            print(o["realtime_start_ns"], o["realtime_end_ns"], p["cgroup"], p["job"])
PY
}
# Seen in a/job_1 for 3 samples: the cache holds it by then.
for _ in $(seq 200); do
  [ "$(samples | grep -c " /$top/a/job_1 1$")" -ge 3 ] && break
  kill -0 $agent 2>/dev/null || break
  sleep 0.1
done
[ "$(samples | grep -c " /$top/a/job_1 1$")" -ge 3 ] ||
  { echo "FAIL: the busy child was not reported in /$top/a/job_1"; samples; cat "$work/log"; exit 1; }
child=$(pgrep -P "$burner" | head -1)
echo "$child" >"$v2/$top/b/job_2/cgroup.procs"
moved=$(date +%s%N)
sleep 4
kill $agent
wait $agent 2>/dev/null || true
agent=
samples | python3 -c '
import sys
top, moved = sys.argv[1], int(sys.argv[2])
rows = [l.split() for l in sys.stdin]
before = [r for r in rows if int(r[1]) < moved]
# A sample that began 1.1 s after the move (the kernel takes its view as
# the process leaves a CPU, and the cache trusts a view up to a second old).
after = [r for r in rows if int(r[0]) > moved + 1.1e9]
assert before and all(r[2:] == [f"/{top}/a/job_1", "1"] for r in before), before
assert len(after) >= 2, f"only {len(after)} samples after the move"
bad = [r for r in after if r[2:] != [f"/{top}/b/job_2", "2"]]
assert not bad, f"{len(bad)} of {len(after)} samples after the move still say {bad[0][2:]}"
print(f"ok: {len(before)} samples in a/job_1, {len(after)} after the move all in b/job_2")
' "$top" "$moved"
