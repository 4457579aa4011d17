# SPDX-License-Identifier: GPL-3.0-or-later
# Shared helpers for the PDU tests: a work directory PDU_TMP, a private
# snmpsimd, cleanup on exit. Sourced by the tests/pdu/*.sh scripts; it
# sources tests/integration/lib.sh (erg_need, free_port, free_udp_port,
# wait_port, erg_ergd_conf, erg_start_ergd, ...), whose work directory is
# PDU_TMP here: lib.sh's ergd config, data and log go there, and what it
# starts (pids[]) is stopped on exit with PDU_PIDS.
#   pdu_snmpsimd DIR PORT  snmpsimd serving DIR's recordings (below)

. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

PDU_TMP=$(mktemp -d /tmp/erg-pdu-test.XXXXXX)
# shellcheck disable=SC2034 # lib.sh's
work=$PDU_TMP
pids=()
PDU_PIDS=""
# On a failure, the tail of each log the test wrote.
pdu_cleanup() {
  [ $? = 0 ] || erg_log_tails "$PDU_TMP"
  for p in $PDU_PIDS "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in $PDU_PIDS "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$PDU_TMP"
}
trap pdu_cleanup EXIT

# pdu_snmpsimd DATADIR PORT [extra snmpsimd args]: starts snmpsimd (as
# nobody when root, which it insists on) and waits until it answers.
pdu_snmpsimd() {
  local data=$1 port=$2; shift 2
  local dir="$PDU_TMP/sim.$port"
  mkdir -p "$dir/data" "$dir/cache"
  cp "$data"/*.snmprec "$dir/data/"
  local user=()
  if [ "$(id -u)" = 0 ]; then
    chown -R nobody:nogroup "$dir"
    chmod 755 "$PDU_TMP"
    user=(--process-user=nobody --process-group=nogroup)
  fi
  snmpsimd --data-dir="$dir/data" --cache-dir="$dir/cache" --logging-method=null \
    --agent-udpv4-endpoint=127.0.0.1:"$port" "${user[@]}" "$@" >"$dir/log" 2>&1 &
  PDU_PIDS="$PDU_PIDS $!"
  local first
  first=$(basename "$(ls "$dir"/data/*.snmprec | head -1)" .snmprec)
  for _ in $(seq 1 100); do
    if snmpget -v2c -c "$first" -t 0.2 -r 0 127.0.0.1:"$port" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 ||
       grep -q "v3-only" <<<"$*"; then
      return 0
    fi
    sleep 0.1
  done
  echo "snmpsimd did not start:"; cat "$dir/log"; exit 1
}
