#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 25. An agent without keys against a CURVE ergd (docs/guide.md step
# 7 after step 5): the agent logs why no handshake completes (at once and
# again after 10 s) and, run with --count, exits 3; ergd logs it once and
# counts it in erg_auth_refused_total. On the same ergd: /metrics gives
# the installed model's fit time exactly (it printed 1.79571e+09, up to
# 5,000 s off) and promtool accepts the page; a keyed agent's repeated
# hellos (every 60 samples) are counted, its first one logged once.
set -euo pipefail
ERG=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
erg_need curl promtool python3
erg_setup agent_link
cd "$work"
for k in collector key1; do "$ERG" keygen $k >/dev/null; done
echo "$(tail -n1 key1.pub) n1" >authorized_keys
erg_ports
erg_ergd_conf <<CONF
curve_secret_key_file = $work/collector.key
authorized_keys_file = $work/authorized_keys
CONF
mkdir -p data/models
cat >data/models/n1.json <<'JSON'
{"format": "erg-model", "version": 1, "node": "n1", "idle_watts": 41.125,
 "created_unix_seconds": 1795712345.25, "step_seconds": 5,
 "features": [{"name": "cpu_seconds_per_second", "coefficient_watts_per_unit": 12.5}]}
JSON
erg_start_ergd
fail() { echo "FAIL: $*"; exit 1; }
# The keyed agent: a hello at seq 1 and 61 (6 s at 0.1 s).
"$AGENT" --node n1 --collector tcp://127.0.0.1:$ZP --interval 0.1 --collection proc \
  --curve-server-key collector.pub --curve-secret-key-file key1.key 2>n1.log &
pids+=($!)
# Guide step 7 without the key options: 12 s, so the 10-s reminder comes.
rc=0
"$AGENT" --node n2 --collector tcp://127.0.0.1:$ZP --interval 0.5 --count 22 \
  --collection proc 2>n2.log || rc=$?
curl -sf "http://127.0.0.1:$HP/metrics" >metrics.txt
cat n2.log
[ "$rc" = 3 ] || fail "agent without keys exited $rc, not 3"
grep -q "error: no handshake with collector tcp://127.0.0.1:$ZP: .*requires CURVE keys.*--curve-server-key" n2.log ||
  fail "agent did not say that the collector requires CURVE keys"
[ "$(grep -c 'error: no handshake' n2.log)" -le 2 ] || fail "handshake failures flood the log"
grep -q "still no handshake with collector tcp://127.0.0.1:$ZP after 1[0-9] s" n2.log ||
  fail "no reminder after 10 s"
grep -q "no link to collector .* at the end of the --count run" n2.log || fail "no exit message"
val() { awk -v s="$1" '$1 == s {print $2}' metrics.txt; }
plain=$(val 'erg_auth_refused_total{reason="plaintext"}')
incomplete=$(val 'erg_auth_refused_total{reason="incomplete"}')
[ $((${plain:-0} + ${incomplete:-0})) -ge 1 ] ||
  fail "ergd counted no plaintext agent: ${plain:-none} + ${incomplete:-none}"
[ "$(grep -c 'refused an agent connection without CURVE (plaintext)' ergd.log)" -le 1 ] ||
  fail "ergd logged the plaintext agent more than once"
grep -q 'node="n2"' metrics.txt && fail "data of the agent without keys got through"
# Full precision: the fit time to the quarter second, idle watts exactly.
python3 - metrics.txt <<'PY' || fail "model values not exact"
import sys
vals = {l.split()[0]: l.split()[1] for l in open(sys.argv[1]) if l.startswith("erg_node_model")}
t = vals.get('erg_node_model_created_timestamp_seconds{node="n1"}')
w = vals.get('erg_node_model_idle_watts{node="n1"}')
print("model created", t, "idle", w)
assert t is not None and float(t) == 1795712345.25, t
assert w is not None and float(w) == 41.125, w
PY
promtool check metrics <metrics.txt || fail "promtool check metrics"
# Hellos: the first logged, the repeat (seq 61) only counted.
new=$(val 'erg_agent_hellos_total{kind="new"}')
rep=$(val 'erg_agent_hellos_total{kind="repeat"}')
[ "${new:-0}" = 1 ] && [ "${rep:-0}" -ge 1 ] || fail "hellos counted: new ${new:-none}, repeat ${rep:-none}"
n=$(grep -c 'agent hello: node n1' ergd.log || true)
[ "$n" = 1 ] || { cat ergd.log; fail "hello of n1 logged $n times"; }
echo "ok: agent without keys exited 3 and said why; ergd counted $plain plaintext + $incomplete" \
  "incomplete handshakes; model time exact; hellos $new logged, $rep counted"
