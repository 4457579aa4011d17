# shellcheck shell=sh
# erg-agent RPM %preun ($1: 0 erase, 1 upgrade): stop and disable on erase.
if [ "$1" = 0 ] && [ -d /run/systemd/system ]; then
  systemctl --no-reload disable --now erg-agent.service >/dev/null 2>&1 || :
fi
