#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Redfish transport rules (issue 33, docs/bmc.md) against a real HTTPS peer
# (Python's ssl server with a self-signed certificate for 127.0.0.1):
# the certificate is checked by default (refused), accepted with ca_file or
# the right pinned public key, refused with a wrong pin, skipped only with
# --insecure (and said); a redirect on the BMC is followed, one to another
# host refused; a 5 MiB answer and a
# body that is no JSON are refused with a clear message, nothing read.
# usage: redfish_tls.sh ERG RECORDINGS
set -euo pipefail
ERG=$1; REC=$2
[ -d "$REC/cray-DL325" ] || { echo "SKIP: no $REC"; exit 77; }
. "$(dirname "$0")/snmp_lib.sh"
erg_need python3 openssl
PEER="$(dirname "$0")/redfish_peer.py"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$PDU_TMP/key.pem" -out "$PDU_TMP/cert.pem" \
  >/dev/null 2>&1
PIN="sha256//$(openssl x509 -in "$PDU_TMP/cert.pem" -pubkey -noout | openssl pkey -pubin \
  -outform der | openssl dgst -sha256 -binary | base64)"
peer() { # PORT QUIRK [CERT KEY]
  python3 "$PEER" "$REC/cray-DL325" "$@" >"$PDU_TMP/peer.$1" 2>&1 &
  PDU_PIDS="$PDU_PIDS $!"
}
TP=$(free_port); RP=$(free_port); HP=$(free_port); GP=$(free_port)
peer "$TP" ok "$PDU_TMP/cert.pem" "$PDU_TMP/key.pem"
peer "$RP" redirect; peer "$HP" huge; peer "$GP" garbage
for p in $TP $RP $HP $GP; do
  for _ in $(seq 1 100); do grep -q ready "$PDU_TMP/peer.$p" 2>/dev/null && break; sleep 0.1; done
  grep -q ready "$PDU_TMP/peer.$p" || { echo "FAIL: peer on $p did not start"; cat "$PDU_TMP/peer.$p"; exit 1; }
done
# expect RC PATTERN -- probe args: the probe's exit and what it says
expect() {
  local want=$1 pat=$2 rc=0
  shift 3
  local t0=$SECONDS
  "$ERG" pdu probe --driver redfish --timeout 5 "$@" >"$PDU_TMP/out" 2>&1 || rc=$?
  echo "probe $* -> $rc in $((SECONDS - t0)) s"
  if [ "$rc" != "$want" ] || ! grep -q -- "$pat" "$PDU_TMP/out"; then
    echo "FAIL: probe $* exit $rc (want $want), output lacks '$pat':"; cat "$PDU_TMP/out"; exit 1
  fi
}
H="https://127.0.0.1:$TP"
expect 2 "SSL certificate\|certificate" -- --host "$H"
expect 0 "now      97 W" -- --host "$H" --ca-file "$PDU_TMP/cert.pem"
expect 0 "now      97 W" -- --host "$H" --pinned-public-key "$PIN"
expect 2 "public key\|pinned" -- --host "$H" --pinned-public-key "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
expect 0 "certificate is not checked" -- --host "$H" --insecure
grep -q "tls_verify = no" "$PDU_TMP/out" || { echo "FAIL: --insecure config lacks tls_verify = no"; exit 1; }
expect 2 "redirected (HTTP 302) to 'http://other.example.*another host: refused" -- --host "http://127.0.0.1:$RP"
expect 2 "larger than 4194304 bytes: refused" -- --host "http://127.0.0.1:$HP"
expect 2 "not a JSON object" -- --host "http://127.0.0.1:$GP"
expect 1 "only https://" -- --host "ftp://127.0.0.1:$GP"
expect 1 "no path" -- --host "https://127.0.0.1:$TP/redfish"
# The config keys: bad values refused by check-config, good ones taken.
for bad in "tls_verify = maybe" "auth = kerberos" "user = admin" "chassis = Node0" \
  "pinned_public_key = AB:CD" "host = https://127.0.0.1/redfish/v1"; do
  printf '[meter.b]\ndriver = redfish\nhost = https://127.0.0.1\n%s\n[node.n]\npower = b\n' "$bad" \
    >"$PDU_TMP/bad.conf"
  if "$ERG" check-config "$PDU_TMP/bad.conf" >/dev/null 2>&1; then
    echo "FAIL: check-config took '$bad'"; exit 1
  fi
done
echo "ok: redfish TLS, redirect, size and JSON checks"
