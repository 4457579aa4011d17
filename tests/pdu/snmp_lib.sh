# Shared helpers for the SNMP tests: free ports, a private snmpsimd, cleanup.
# Sourced by the tests/pdu/*.sh scripts; exits 77 when a tool is missing.

pdu_need() {
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
  done
}

pdu_free_port() {
  python3 -c 'import socket
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

PDU_TMP=$(mktemp -d /tmp/erg-pdu-test.XXXXXX)
PDU_PIDS=""
pdu_cleanup() {
  for p in $PDU_PIDS; do kill "$p" 2>/dev/null || true; done
  for p in $PDU_PIDS; do wait "$p" 2>/dev/null || true; done
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
