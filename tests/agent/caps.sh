#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Least privilege: the agent runs as nobody with only the capabilities
# docs/agent.md lists. With CAP_BPF + CAP_PERFMON it collects via eBPF and
# still sees root's processes; on the /proc path CAP_DAC_READ_SEARCH +
# CAP_SYS_PTRACE let it read other users' /proc/PID/io.
set -euo pipefail
AGENT=$1
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to drop to nobody"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
group=$(id -gn nobody)
work=$(mktemp -d /tmp/erg-caps.XXXXXX)
busy= writer=
trap 'kill $busy $writer 2>/dev/null || true; rm -rf "$work"' EXIT
# nobody must be able to run the binary wherever the build tree lives.
chmod 755 "$work"
cp "$AGENT" "$work/erg-agent"
chmod 755 "$work/erg-agent"
as_nobody() { # caps, then the agent's arguments
  local caps=$1
  shift
  setpriv --reuid=nobody --regid="$group" --clear-groups --inh-caps="-all$caps" \
    --ambient-caps="-all$caps" --bounding-set="-all$caps" -- "$work/erg-agent" "$@"
}
# Root's processes: one busy, one writing to disk.
sha256sum /dev/zero &
busy=$!
python3 -c '
import os, sys
with open(sys.argv[1], "wb") as f:
    while True:
        f.seek(0); f.write(b"x" * 262144); f.flush(); os.fsync(f.fileno())
' "$work/written" &
writer=$!
sleep 0.5

# The busy process's own CPU seconds (utime + stime): the agent's figures are
# checked against what it really got, not a fixed share a loaded host denies it.
busy_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$busy/stat"; }

check() { # file collection, busy's CPU before and after the agent ran
  python3 - "$1" "$2" "$busy" "$writer" "$3" "$4" <<'PY'
import json, sys
path, coll, busy, writer = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
got = float(sys.argv[6]) - float(sys.argv[5])
objs = [json.loads(l) for l in open(path)]
assert objs[0]["collection"] == coll, objs[0]
procs = [p for o in objs[1:] for p in o["procs"]]
b = [p for p in procs if p["pid"] == busy]
assert b, "root's busy process not seen"
assert all(p["uid"] == 0 and p["rss_bytes"] > 0 for p in b), b
# Deltas per interval: their sum is what the agent saw of the busy process's
# CPU while it ran: at most all of it, and more than a tenth (2 intervals of a
# run that loading BPF on a busy host can stretch to 4 s or more).
cpu = sum(p["cpu_ns"] for p in b) / 1e9
assert 0.1 * got < cpu <= got + 0.02, (cpu, got)
w = sum(p["write_bytes"] for p in procs if p["pid"] == writer)
print(f"{coll} as nobody: root's busy process seen ({cpu:.2f} of its {got:.2f} s CPU), writer wrote {w} B")
if coll == "proc":
    assert w > 0, "no write_bytes for root's writer: /proc/PID/io unreadable"
PY
}

c0=$(busy_cpu)
if bpf_err=$(as_nobody ,+bpf,+perfmon --dump --count 2 --interval 1 --collection bpf \
               2>&1 >"$work/bpf.json"); then
  check "$work/bpf.json" bpf "$c0" "$(busy_cpu)"
else
  echo "note: eBPF as nobody with CAP_BPF+CAP_PERFMON failed here: $bpf_err"
  [ ! -r /sys/kernel/btf/vmlinux ] || { echo "FAIL: kernel has BTF, eBPF should load"; exit 1; }
fi
c0=$(busy_cpu)
as_nobody ,+dac_read_search,+sys_ptrace --dump --count 2 --interval 1 --collection proc \
  >"$work/proc.json" 2>"$work/proc.log"
check "$work/proc.json" proc "$c0" "$(busy_cpu)"
# Without any capability "auto" still runs, on /proc, and says why.
as_nobody "" --dump --count 1 --interval 0.5 >"$work/none.json" 2>"$work/none.log"
grep -q '"collection":"proc"' "$work/none.json" && grep -q 'BPF unavailable' "$work/none.log" ||
  { echo "FAIL: no fallback without capabilities"; cat "$work/none.log"; exit 1; }
echo "ok: no capabilities: $(grep -o 'BPF unavailable.*' "$work/none.log")"
