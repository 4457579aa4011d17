# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=sh
# erg-agent RPM %post ($1: 1 install, 2 upgrade): the user erg-agent; never
# enables the agent (the operator does, docs/install.md); an upgrade restarts
# a running agent.
systemd-sysusers /usr/lib/sysusers.d/erg-agent.conf >/dev/null 2>&1 || :
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || :
  [ "$1" = 1 ] || systemctl try-restart erg-agent.service >/dev/null 2>&1 || :
fi
