# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=sh
# ergd RPM %post ($1: 1 install, 2 upgrade): the user erg and /var/lib/erg;
# never enables ergd (the operator does, docs/install.md); an upgrade
# restarts a running ergd.
systemd-sysusers /usr/lib/sysusers.d/ergd.conf >/dev/null 2>&1 || :
systemd-tmpfiles --create /usr/lib/tmpfiles.d/ergd.conf >/dev/null 2>&1 || :
# The config holds secrets: 0640 (as packaged), given to erg whenever it is
# root's group (an upgrade's new version is).
if [ -f /etc/erg/ergd.conf ] && [ "$(stat -c %G /etc/erg/ergd.conf)" = root ]; then
  chgrp erg /etc/erg/ergd.conf || :
  [ "$1" != 1 ] || chmod 0640 /etc/erg/ergd.conf || :
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || :
  [ "$1" = 1 ] || systemctl try-restart ergd.service >/dev/null 2>&1 || :
fi
