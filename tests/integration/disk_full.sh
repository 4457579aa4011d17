#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A full disk says why (issue 35): ergd used to log "pages: cannot write
# model-real.html" and "WAL write …: short write". Pages and the WAL on a
# small tmpfs that a filler file keeps full for a few seconds: each
# writer's failures are logged once with the file and "No space left on
# device", and, once the filler is gone and writes went through for 10 s,
# that writing works again. About 40 s.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
for t in curl dd; do command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }; done
erg_setup disk_full
erg_ports
mkdir -p "$work/full"
mount -t tmpfs -o size=8m tmpfs "$work/full" ||
  { echo "SKIP: cannot mount a tmpfs (tests run as root)"; exit 77; }
ERG_CLEANUP='umount -l "$work/full" 2>/dev/null || true'
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.2
page_interval_seconds = 1
www_dir = $work/full/www
wal_dir = $work/full/wal
$(erg_sim_meter)
[node.n1]
power = sim:1
CONF
metric() { curl -sf "http://127.0.0.1:$HP/metrics" | awk -v s="$1" '$1 == s { print $2 }'; }
log=$work/ergd.log
erg_start_pdusim --node n1 --idle 80 --update 0.2
erg_start_ergd "$log"
erg_start_agent n1 --interval 1
for _ in $(seq 1 60); do
  [ "$(metric 'erg_page_renders_total{result="ok"}')" -ge 1 ] 2>/dev/null && break
  sleep 0.5
done
[ -e "$work/full/www/index.html" ] || { echo "FAIL: no pages"; cat "$log"; exit 1; }
# The filler takes whatever ergd frees (old WAL segments, replaced pages)
# within 50 ms: full, as a disk that others fill up too.
(while [ ! -e "$work/unfill" ]; do cat /dev/zero >>"$work/full/filler" 2>/dev/null || true; sleep 0.05; done) &
filler=$!
# Failures for a few seconds: several renders, a WAL record per input.
erg_wait_log "$log" "pages: .*No space left on device" 1 10 || true
erg_wait_log "$log" "WAL cannot write .*No space left on device" 1 10 || true
# (A render takes over a second under ASan on a loaded machine: wait for
# the second failure, not a fixed time.)
for _ in $(seq 1 40); do
  failed=$(metric 'erg_page_renders_total{result="failed"}')
  [ "${failed:-0}" -ge 2 ] 2>/dev/null && break
  sleep 0.5
done
sleep 1
dropped=$(metric 'erg_wal_records_total{result="dropped"}')
failed=$(metric 'erg_page_renders_total{result="failed"}')
touch "$work/unfill"
wait "$filler"
rm -f "$work/full/filler"
# Said once writes went through for 10 s.
erg_wait_log "$log" "pages: rendering works again" 1 20 || true
erg_wait_log "$log" "WAL: writing .* works again" 1 20 || true
kill "$ERGD_PID"; wait "$ERGD_PID" || true
fail=0
check() { # PATTERN WHAT: exactly one such line
  local n
  n=$(grep -c -- "$1" "$log" || true)
  [ "$n" = 1 ] || { echo "FAIL: $2: $n lines, not 1"; fail=1; }
}
check "pages: cannot write $work/full/www/[^ ]*: No space left on device (logged once" \
  "pages failure with file and reason"
check "WAL cannot write $work/full/wal/[^ ]*: No space left on device; inputs are applied" \
  "WAL failure with file and reason"
check "pages: rendering works again, no failure for 10 s" "pages recovery"
check "WAL: writing $work/full/wal/[^ ]* works again, no error for 10 s ([0-9]* records were not logged)" \
  "WAL recovery"
[ "${failed:-0}" -ge 2 ] || { echo "FAIL: $failed failed renders counted (want several, logged once)"; fail=1; }
[ "${dropped:-0}" -ge 2 ] || { echo "FAIL: $dropped WAL records dropped (want several, logged once)"; fail=1; }
grep -q "short write" "$log" && { echo "FAIL: a short write without its reason"; fail=1; }
if [ $fail != 0 ]; then grep -E "warning|info: (pages|WAL)" "$log" | head -20; exit 1; fi
echo "ok: full disk: pages ($failed failed renders) and WAL ($dropped records) each said once" \
  "with file and reason, and once that writing works again"
