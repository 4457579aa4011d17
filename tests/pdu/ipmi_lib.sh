# SPDX-License-Identifier: GPL-3.0-or-later
# Helpers of the ipmi tests (sourced after snmp_lib.sh): simulated BMCs
# answering DCMI over IPMI 2.0 lanplus (pdusim/dcmi_bmc.py on python3-pyghmi,
# a real RMCP+ stack), with the password "password" for user admin.
#   ipmi_bmc NAME [dcmi_bmc.py args]   starts one; sets BMC_PORT, writes
#                                      $PDU_TMP/NAME.ctl's path as BMC_CTL
#   ipmi_pwfile NAME TEXT              a 0600 password file, its path printed
PY=/usr/bin/python3 # pyghmi is a Debian package: Debian's python, not a pyenv
"$PY" -c 'import pyghmi.ipmi.bmc' 2>/dev/null ||
  { echo "SKIP: python3-pyghmi not installed"; exit 77; }
IPMI_SIM=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../pdusim" && pwd)/dcmi_bmc.py

ipmi_bmc() {
  local name=$1; shift
  BMC_PORT=$(free_udp_port)
  BMC_CTL=$PDU_TMP/$name.ctl
  "$PY" "$IPMI_SIM" --port "$BMC_PORT" --control "$BMC_CTL" "$@" >"$PDU_TMP/$name.log" 2>&1 &
  PDU_PIDS="$PDU_PIDS $!"
  local i
  for i in $(seq 1 100); do
    grep -q '^ready' "$PDU_TMP/$name.log" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "BMC $name did not start:"; cat "$PDU_TMP/$name.log"; exit 1
}

ipmi_pwfile() {
  local f=$PDU_TMP/$1.pw
  printf '%s\n' "$2" >"$f"
  chmod 600 "$f"
  echo "$f"
}
