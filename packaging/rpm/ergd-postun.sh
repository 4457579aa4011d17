# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=sh
# ergd RPM %postun: systemd forgets the removed unit.
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || :
fi
