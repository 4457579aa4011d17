#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A collector that stops answering without closing TCP (host dead, partition,
# hung ergd). The receiver is SIGSTOPped: its kernel still ACKs, so without
# heartbeats every sample flows into TCP buffers and the agent never notices.
#  A: stop 8 s, then SIGCONT. The agent must log the loss within its
#     heartbeat timeout and fall back on its counted queue: every seq is
#     received or reported in dropped_samples, but for what was written to
#     the old connection before the timeout. Usually the resumed receiver
#     reads those late; when the old connection ends in a reset, its
#     receive buffer is discarded (seen in CI: 10 of 10), so they get the
#     same bound as in B.
#  B: stop 8 s, then SIGKILL and a new receiver (the dead host's buffers are
#     gone). What was written before the heartbeat timeout is lost uncounted;
#     it must stay within (ivl + timeout) / interval + 3 samples. Without
#     heartbeats all ~40 samples of the stop were lost uncounted.
set -euo pipefail
AGENT=$1 PROBE=$2
. "$(dirname "$0")/../integration/lib.sh"
work=$(mktemp -d /tmp/erg-heartbeat.XXXXXX)
agent= probe=
trap '[ -n "$agent" ] && kill $agent 2>/dev/null; [ -n "$probe" ] && kill -9 $probe 2>/dev/null; rm -rf "$work"' EXIT
port=$(free_port)
# heartbeat 0.5 s: timeout 1.5 s; the window until the loss is seen is at
# most ivl + timeout = 2 s, i.e. 10 samples at 0.2 s.
cat >"$work/agent.conf" <<CONF
[agent]
node = hb
collector = tcp://127.0.0.1:$port
interval_seconds = 0.2
heartbeat_seconds = 0.5
queue_samples = 5
collection = proc
CONF
start_probe() { "$PROBE" "tcp://127.0.0.1:$port" 120 >"$work/$1.out" & probe=$!; }
start_probe a
"$AGENT" -c "$work/agent.conf" 2>"$work/agent.log" &
agent=$!
sleep 3
date +%s >"$work/stop_a"
kill -STOP $probe
sleep 8
kill -CONT $probe
sleep 4
date +%s >"$work/stop_b"
kill -STOP $probe
sleep 8
kill -KILL $probe
wait $probe 2>/dev/null || true
start_probe b
sleep 4
kill $agent; wait $agent 2>/dev/null || true; agent=
kill $probe; wait $probe 2>/dev/null || true; probe=
cat "$work/agent.log"
python3 - "$work" <<'PY'
import re, sys, calendar, time
w = sys.argv[1]
def samples(name, kind="sample"):
    rows = [l.split() for l in open(f"{w}/{name}.out")]
    assert not [r for r in rows if r[0] == "bad"], rows
    return [(int(r[1]), int(r[2])) for r in rows if r[0] == kind]
a, b = samples("a"), samples("b")
# Copies the agent sent again after each reconnect (docs/agent.md
# "Resend"): they may repeat a seq, and fill what the old connection lost.
resent_a = {s for s, _ in samples("a", "resent")}
resent_b = {s for s, _ in samples("b", "resent")}
# Each connection delivers in order, but after a SIGCONT the old one's
# buffered samples and the new one's queue arrive interleaved (the collector
# takes late samples that fill a gap): the seqs must split into at most two
# increasing runs, each seq once.
def two_runs(seqs):
    tails = []
    for x in seqs:
        fits = [i for i, t in enumerate(tails) if t < x]
        if fits:
            i = max(fits, key=lambda i: tails[i])
            tails[i] = x
        elif len(tails) < 2:
            tails.append(x)
        else:
            return False
    return True
for got in (a, b):
    seqs = [s for s, _ in got]
    assert len(set(seqs)) == len(seqs), f"a seq twice: {seqs}"
    assert two_runs(seqs), f"not two connections' worth of ordered runs: {seqs}"
# A: everything up to the last seq received is received or counted.
last_a = a[-1][0]
got_a = {s for s, _ in a} | resent_a
missing_a = sum(1 for s in range(1, last_a + 1) if s not in got_a)
dropped_a = sum(d for _, d in a)
print(f"A: seq 1..{last_a}: {len(got_a)} received ({len(resent_a)} resent), {dropped_a} counted, "
      f"{missing_a} missing")
assert dropped_a > 0, "the agent never noticed: its queue did not fill and nothing was counted"
window = (0.5 + 1.5) / 0.2 + 3
assert 0 <= missing_a - dropped_a <= window, f"{missing_a - dropped_a} samples lost uncounted after a SIGCONT"
report = max(s for s, d in a if d)
assert len([s for s, _ in a if s > report]) >= 5, "too few samples after the resume"
# B: seqs after A's last, up to B's last.
last_b = b[-1][0]
got_b = {s for s, _ in b} | resent_b
missing_b = sum(1 for s in range(last_a + 1, last_b + 1) if s not in got_b)
dropped_b = sum(d for _, d in b)
lost = missing_b - dropped_b
print(f"B: seq {last_a + 1}..{last_b}: {len(got_b)} received ({len(resent_b)} resent), "
      f"{dropped_b} counted, "
      f"{lost} lost uncounted")
# The queue (5 samples and a hello, less what the new connection's engine
# had taken) goes out first, then the drop report, then new samples.
report = min(i for i, (_, d) in enumerate(b) if d)
assert report >= 1 and len(b) - report >= 5, f"queue or resume missing: {b[:report + 2]}"
assert dropped_b > 0 and 0 <= lost <= window, f"{lost} samples lost uncounted"
# The log says when the link was lost, within ivl + timeout (+ the send that
# reads the event, + 1 s of log resolution, + 1 s for a loaded machine).
lost_at = [calendar.timegm(time.strptime(m, "%Y-%m-%dT%H:%M:%SZ"))
           for m in re.findall(r"^(\S+) erg-agent warning: lost collector", open(f"{w}/agent.log").read(), re.M)]
for stop in ("stop_a", "stop_b"):
    t0 = int(open(f"{w}/{stop}").read())
    assert [t for t in lost_at if 0 <= t - t0 <= 0.5 + 1.5 + 0.2 + 2], f"no loss logged after {stop}: {lost_at} vs {t0}"
print("ok: heartbeat loss seen in the log; A lost", missing_a - dropped_a, "uncounted, B lost", lost)
PY
