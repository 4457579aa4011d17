# shellcheck shell=sh
# ergd RPM %preun ($1: 0 erase, 1 upgrade): stop and disable on erase.
if [ "$1" = 0 ] && [ -d /run/systemd/system ]; then
  systemctl --no-reload disable --now ergd.service >/dev/null 2>&1 || :
fi
