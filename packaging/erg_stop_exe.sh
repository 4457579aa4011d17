# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=sh
# erg_stop_exe BINARY SECONDS, pasted into the erg-agent and ergd prerm
# (DEB) and %preun (RPM) scripts by cmake/ErgPackage.cmake (configure_file,
# @ERG_STOP_EXE@ in packaging/deb/*/prerm.in, packaging/rpm/*-preun.sh.in).
# Stops what runs the binary $1, however it was started (a unit, another
# supervisor, by hand): SIGTERM, SIGKILL after $2 seconds. Only processes
# whose executable is this very file (same inode: not a container's copy).
erg_stop_exe() {
  id=$(stat -L -c %d:%i "$1" 2>/dev/null) || return 0
  pids=
  for d in /proc/[0-9]*; do
    [ "$(stat -L -c %d:%i "$d/exe" 2>/dev/null)" != "$id" ] || pids="$pids ${d#/proc/}"
  done
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086 # lists of pids
  kill -TERM $pids 2>/dev/null || true
  i=0
  while [ $i -lt $(($2 * 10)) ]; do
    alive=
    for p in $pids; do # a zombie has no exe; a reused pid another one
      [ "$(stat -L -c %d:%i "/proc/$p/exe" 2>/dev/null)" != "$id" ] || alive="$alive $p"
    done
    [ -n "$alive" ] || return 0
    sleep 0.1
    i=$((i + 1))
  done
  # shellcheck disable=SC2086
  kill -KILL $alive 2>/dev/null || true
}
