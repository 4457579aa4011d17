#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Collector outage: an agent with queue_samples = 5 starts 10 s before its
# collector. The collector then gets the 5 queued samples in order, and the
# next sample reports exactly the ones dropped in between.
set -euo pipefail
AGENT=$1 PROBE=$2
. "$(dirname "$0")/../integration/lib.sh"
erg_need ss
work=$(mktemp -d /tmp/erg-outage.XXXXXX)
agent=
trap '[ -n "$agent" ] && kill $agent 2>/dev/null; rm -rf "$work"' EXIT
port=$(free_port)
cat >"$work/agent.conf" <<CONF
[agent]
node = outage
collector = tcp://127.0.0.1:$port
interval_seconds = 1
queue_samples = 5
collection = proc
CONF
"$AGENT" -c "$work/agent.conf" 2>"$work/agent.log" &
agent=$!
sleep 10
# The probe listens for 6 s: the queued samples arrive at once, then ~5 new.
"$PROBE" "tcp://127.0.0.1:$port" 6 >"$work/probe.out"
kill $agent; wait $agent 2>/dev/null || true; agent=
cat "$work/probe.out"
python3 - "$work/probe.out" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
samples = [(int(r[1]), int(r[2])) for r in rows if r[0] == "sample"]
assert not [r for r in rows if r[0] == "bad"], rows
seqs = [s for s, _ in samples]
assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"not in order: {seqs}"
assert seqs[:5] == [1, 2, 3, 4, 5], f"the queued samples should be seq 1..5: {seqs}"
assert all(d == 0 for _, d in samples[:5]), samples[:5]
later = samples[5:]
assert later, "no sample after the queued ones"
first = later[0]
# Every seq missing between the queue and the first later sample was dropped
# and counted: the report is exact, not approximate.
assert first[1] == first[0] - 6 and first[1] >= 4, f"dropped report {first} (seq 6..{first[0]-1} lost)"
assert all(d == 0 for _, d in later[1:]), later
print(f"ok: queued seq 1..5 delivered in order; seq {first[0]} reports {first[1]} dropped")
PY
