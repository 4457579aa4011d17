#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The page renderer cannot wedge ergd (issue 35): a forked render child once
# deadlocked in the allocator holding a read lock on an archive; pages froze,
# archive updates failed ("could not lock RRD") and SIGTERM did not end it.
# The render now runs in a process started with exec, killed after
# page_timeout_seconds. ERG_TEST_RENDER_PROGRAM (for tests only) puts a
# script in its place:
#   1. its first call once the node's archive exists hangs holding a read
#      lock on it, as that child did: killed after 1.5 s, logged and
#      counted. The lock is held from the render's start and cells are 1 s,
#      so at least one update meets it; the writer, which waits up to 2 s
#      for a lock, loses no update; later calls run
#      the real renderer (ergd itself): pages keep coming. On a loaded
#      machine (or ASan) a full first render may also take over 1.5 s: it
#      is killed too, but the graphs it drew are kept (each file is
#      atomic, fresh ones are not drawn again), so the next one finishes;
#   2. a render that hangs (with a child of its own) under the default
#      deadline: SIGTERM stops ergd at once and the render's process group
#      with it.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
for t in curl perl; do command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }; done
erg_setup render_deadline
erg_ports
cat >"$work/render.sh" <<SH
#!/bin/sh
if [ -e "$work/hang" ]; then
  sleep 60 & echo "\$\$ \$!" >"$work/hang.pids"; wait; exit 1
fi
# The wedge only once the archive exists, so the lock is held from the
# render's start: a lock taken later would leave less than the 1-s step
# before the kill, and no update might meet it.
if [ ! -e "$work/lock-taken" ] && [ -e "$work/data/nodes/n1/node.rrd" ]; then
  # Perl (perl-base, always there) takes the lock in milliseconds; Python
  # took 0.3 s to start here, seconds at load 14, most of the 1.5 s.
  # struct flock of 64-bit Linux: type, whence, pad, start, len, pid, pad.
  exec perl -MFcntl -e '
open(my \$f, "<", \$ARGV[0]) or die "open: \$!";
fcntl(\$f, F_SETLKW, pack("s s x4 q q l x4", F_RDLCK, SEEK_SET, 0, 0, 0)) or die "lock: \$!";
open(my \$t, ">", \$ARGV[1]) or die "\$ARGV[1]: \$!"; close \$t;
sleep 60' "$work/data/nodes/n1/node.rrd" "$work/lock-taken"
fi
# The real renders must beat the 1.5-s deadline too, and at load 16 under
# ASan they never did (the hour graphs went stale before a pass was done):
# they run ahead of the other load (nice -10, as root; elsewhere nice says
# it cannot and runs them as they are).
exec nice -n -10 "$ERGD" "\$@"
SH
chmod +x "$work/render.sh"
export ERG_TEST_RENDER_PROGRAM=$work/render.sh
conf() {
  erg_ergd_conf <<CONF
step_seconds = 1
# Renders must also finish under the deadline on a loaded machine: small
# archives, and SVG (a full render 0.5 s of CPU, PNG 1.6 s: at load 14 a
# PNG render was killed again and again, hour graphs going stale in between)
archive_days = 0.1 1 7 30
page_format = svg
settle_steps = 1
poll_seconds = 0.2
page_interval_seconds = 1
$1
$(erg_sim_meter)
[node.n1]
power = sim:1
CONF
}
metric() { curl -sf "http://127.0.0.1:$HP/metrics" | awk -v s="$1" '$1 == s { print $2 }'; }

# 1. A render wedged holding a lock.
conf "page_timeout_seconds = 1.5"
erg_start_pdusim --node n1 --idle 80 --update 0.2
erg_start_ergd "$work/ergd1.log"
erg_start_agent n1 --interval 1
for _ in $(seq 1 100); do [ -e "$work/lock-taken" ] && break; sleep 0.1; done
[ -e "$work/lock-taken" ] || { echo "FAIL: the first render never took its lock"; cat "$work/ergd1.log"; exit 1; }
t_lock=$(date +%s)
# Renders that ended well before this one (it hangs while counted).
ok0=$(metric 'erg_page_renders_total{result="ok"}')
ok=0
for _ in $(seq 1 80); do
  ok=$(($(metric 'erg_page_renders_total{result="ok"}') - ${ok0:-0}))
  [ "$ok" -ge 2 ] && break
  sleep 0.5
done
[ "$ok" -ge 2 ] || { echo "FAIL: no pages after the wedged render ($ok)"; cat "$work/ergd1.log"; exit 1; }
[ "$(stat -c %Y "$work/data/www/index.html")" -ge "$t_lock" ] || { echo "FAIL: index.html not rewritten"; exit 1; }
sleep 3 # cells written after the lock's time are in too
# The count and the log at one moment: at load under ASan a render is
# still killed now and then, its line written a moment after the count.
killed() { grep -c 'pages: the render took over 1.5 s and was killed' "$work/ergd1.log" || true; }
for _ in $(seq 1 20); do
  timeouts=$(metric 'erg_page_renders_total{result="timeout"}')
  n=$(killed)
  [ "$n" = "$timeouts" ] && [ "$(metric 'erg_page_renders_total{result="timeout"}')" = "$timeouts" ] && break
  sleep 0.2
done
errors=$(metric erg_store_errors_total)
retries=$(metric erg_store_lock_retries_total)
kill "$ERGD_PID"; wait "$ERGD_PID" || true
[ "${timeouts:-0}" -ge 1 ] && [ "$n" = "$timeouts" ] ||
  { echo "FAIL: $timeouts renders killed, $n logged"; cat "$work/ergd1.log"; exit 1; }
[ "$errors" = 0 ] && ! grep -q 'could not lock' "$work/ergd1.log" ||
  { echo "FAIL: $errors archive updates failed"; cat "$work/ergd1.log"; exit 1; }
[ "${retries:-0}" -ge 1 ] || { echo "FAIL: no update met the lock ($retries): the test proves nothing"; exit 1; }

# 2. SIGTERM while a render hangs.
touch "$work/hang"
conf ""
erg_start_ergd "$work/ergd2.log"
for _ in $(seq 1 100); do [ -s "$work/hang.pids" ] && break; sleep 0.1; done
[ -s "$work/hang.pids" ] || { echo "FAIL: no hanging render"; cat "$work/ergd2.log"; exit 1; }
t0=$(date +%s%N)
kill "$ERGD_PID"
wait "$ERGD_PID" || true
ms=$((($(date +%s%N) - t0) / 1000000))
read -r sh_pid sleep_pid <"$work/hang.pids"
# Killed; a zombie is reaped by whoever inherits it, a moment later.
running() { local st; st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) && [ "$st" != Z ]; }
left=
for p in $sh_pid $sleep_pid; do running "$p" && left="$left $p"; done
[ -z "$left" ] || { echo "FAIL: render processes$left outlive ergd"; kill -9 $left; exit 1; }
[ "$ms" -lt 5000 ] || { echo "FAIL: ergd took $ms ms to stop"; cat "$work/ergd2.log"; exit 1; }
echo "ok: wedged render killed after 1.5 s ($timeouts killed in all), $ok renders since, 0 failed updates" \
  "($retries waited for the lock); SIGTERM during a hung render: ergd and the render gone in $ms ms"
