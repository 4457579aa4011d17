#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The data dir's format version, DATA_DIR/FORMAT (issue 24, docs/store.md
# "Data directory format and upgrades"):
# (a) a data dir of the previous release (what this ergd writes, minus
#     FORMAT) is marked format 1, said once, and its journal goes on;
# (b) FORMAT of a newer erg ("erg-data 2"): ergd refuses, says which file,
#     which format and which it reads, exits non-zero and changes nothing
#     in the dir (contents, listing, mtimes);
# (c) a garbled FORMAT: refused likewise.
set -euo pipefail
PDUSIM=$1 ERGD=$2
. "$(dirname "$0")/lib.sh"
erg_setup datadir_format
erg_ports
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
$(erg_sim_meter)
[node.n1]
power = sim:1
CONF
data=$work/data j=$work/data/journal/n1.csv
rows() { grep -c '^[0-9]' "$j" 2>/dev/null || true; }
# Waits (max 12 s) until the journal has at least $1 rows.
wait_rows() {
  for _ in $(seq 1 120); do
    [ "$(rows)" -ge "$1" ] && return 0
    sleep 0.1
  done
  echo "FAIL: journal has $(rows) rows, waited for $1"; cat "$work/ergd.log"; exit 1
}
stop_ergd() { kill "$ERGD_PID"; wait "$ERGD_PID" || true; }
erg_start_pdusim --node n1 --idle 80 --update 0.5

# The previous release's data dir: a run of this ergd, FORMAT removed. A
# new dir gets FORMAT without the "earlier erg" line.
erg_start_ergd
wait_rows 2
stop_ergd
[ "$(cat "$data/FORMAT")" = "erg-data 1" ] || { echo "FAIL: new dir: FORMAT '$(cat "$data/FORMAT")'"; exit 1; }
! grep -q 'marked format' "$work/ergd.log" || { echo "FAIL: a new dir said 'marked'"; exit 1; }
rm "$data/FORMAT"
old=$(rows) last_old=$(grep '^[0-9]' "$j" | tail -n1 | cut -d, -f1)

# (a) opened by this ergd.
erg_start_ergd "$work/ergd-a.log"
wait_rows $((old + 2))
stop_ergd
[ "$(cat "$data/FORMAT")" = "erg-data 1" ] || { echo "FAIL: (a) FORMAT '$(cat "$data/FORMAT" 2>&1)'"; exit 1; }
n=$(grep -c "data dir $data: marked format 1 (written by an earlier erg)" "$work/ergd-a.log" || true)
[ "$n" = 1 ] || { echo "FAIL: (a) said $n times"; cat "$work/ergd-a.log"; exit 1; }
[ "$(grep -c '^# erg-journal v1' "$j")" = 1 ] || { echo "FAIL: (a) journal header repeated"; cat "$j"; exit 1; }
head -n1 "$j" | grep -q '^# erg-journal v1' || { echo "FAIL: (a) header not first"; cat "$j"; exit 1; }
grep '^[0-9]' "$j" | cut -d, -f1 | awk -v lo="$last_old" -v n="$old" '
  NR > 1 && $1 <= prev { bad = 1 } { prev = $1 }
  NR == n && $1 != lo { bad = 1 } NR == n + 1 && $1 <= lo { bad = 1 }
  END { exit bad }' || { echo "FAIL: (a) journal rows not continued after $last_old"; cat "$j"; exit 1; }
[ "$(rows)" -gt "$old" ] || { echo "FAIL: (a) no new rows"; exit 1; }
echo "ok (a): marked format 1, said once, journal $old -> $(rows) rows, one header"

# (b), (c): refused, nothing in the dir touched.
snapshot() {
  (cd "$data" && find . -type f -print0 | sort -z | xargs -0 md5sum &&
     find . -printf '%p %y %s %T@ %m\n' | sort)
}
refused() { # CASE FORMAT-BYTES EXPECTED-MESSAGE
  printf "$2" >"$data/FORMAT"
  touch -d '2020-01-01 00:00:00' "$data/FORMAT" "$data"
  local before rc=0
  before=$(snapshot)
  timeout 10 "$ERGD" -c "$work/ergd.conf" >"$work/ergd-$1.log" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || { echo "FAIL: ($1) ergd exit $rc"; cat "$work/ergd-$1.log"; exit 1; }
  grep -qF "$3" "$work/ergd-$1.log" || { echo "FAIL: ($1) no message '$3'"; cat "$work/ergd-$1.log"; exit 1; }
  [ "$(snapshot)" = "$before" ] || { echo "FAIL: ($1) the data dir changed"; diff <(echo "$before") <(snapshot); exit 1; }
  echo "ok ($1): exit $rc, dir unchanged: $(grep -F "$3" "$work/ergd-$1.log")"
}
refused b 'erg-data 2\n' \
  "$data/FORMAT was written by a newer erg (format 2); this ergd reads format 1: upgrade erg or point data_dir elsewhere"
refused c 'erg-dat\001a 1x\n' "$data/FORMAT is garbled"
refused c2 '' "$data/FORMAT is garbled"
