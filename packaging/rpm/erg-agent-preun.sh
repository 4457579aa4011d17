# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=sh
# erg-agent RPM %preun ($1: 0 erase, 1 upgrade): stop and disable on erase; a
# erg-agent started without systemd (another supervisor, by hand) is stopped too.
# Stops what runs /usr/sbin/erg-agent, however it was started (a unit, another
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

if [ "$1" = 0 ]; then
  if [ -d /run/systemd/system ]; then
    systemctl --no-reload disable --now erg-agent.service >/dev/null 2>&1 || :
  fi
  erg_stop_exe /usr/sbin/erg-agent 10
fi
