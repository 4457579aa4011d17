#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs test_pdu_snmp against snmpsimd (v2c, and v3 users SHA/AES + MD5/DES)
# and a UDP socket that never answers. usage: snmp_poll.sh TEST FIXTURE_DIR
set -euo pipefail
TEST=$1; FIX=$2
. "$(dirname "$0")/snmp_lib.sh"
erg_need snmpsimd snmpget python3
P2=$(free_udp_port); P3=$(free_udp_port); PS=$(free_udp_port)
pdu_snmpsimd "$FIX" "$P2"
pdu_snmpsimd "$FIX" "$P3" --v3-only \
  --v3-user=usha --v3-auth-key=authpass123 --v3-auth-proto=SHA \
  --v3-priv-key=privpass123 --v3-priv-proto=AES \
  --v3-user=umd5 --v3-auth-key=authpass456 --v3-auth-proto=MD5 \
  --v3-priv-key=privpass456 --v3-priv-proto=DES \
  --v3-user=ubad --v3-auth-key=authpass789 --v3-auth-proto=SHA \
  --v3-priv-key=privpass789 --v3-priv-proto=AES
for _ in $(seq 1 100); do
  snmpget -v3 -l authPriv -u usha -a SHA -A authpass123 -x AES -X privpass123 -n apc-rpdu2 \
    -t 0.2 -r 0 127.0.0.1:"$P3" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 && break
  sleep 0.1
done
# A PDU that is there but never answers: a bound socket nobody reads.
python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",int(sys.argv[1])))
time.sleep(600)' "$PS" &
PDU_PIDS="$PDU_PIDS $!"
ERG_SNMP_PORT=$P2 ERG_SNMP_V3_PORT=$P3 ERG_SNMP_SILENT_PORT=$PS "$TEST"
