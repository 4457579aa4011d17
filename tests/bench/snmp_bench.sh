#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# SNMP polling benchmark (not a ctest test): N simulated rPDU2 PDUs x M
# outlets served by snmpsimd on loopback (A processes, N/A data files each,
# community = PDU), one full round = every outlet's power and energy of every
# PDU. Compares erg_pdu_snmp_poll_many (one loop), the blocking per-source
# vtable poll (sequential) and prometheus-snmp-exporter (N concurrent
# scrapes, one module per community, the same GET of the same OIDs).
# usage: snmp_bench.sh [--port-base PORT] BUILD_DIR [N=500] [M=24] [ROUNDS=5] [AGENTS=2]
# Ports: PORT .. PORT+AGENTS (or ERG_BENCH_PORT_BASE; tests/bench/bench_lib.sh):
#   +0 snmp_exporter's HTTP port, +1 .. +AGENTS the agents' UDP ports.
# INFLIGHT_SWEEP="16 32 128 256": also time poll_many with these windows.
# PASSES=3: also alternate erg and the exporter (64 in flight) 3 times.
# SNMP_AGENT=fast: serve the same values from tests/bench/snmp_bench_agent.c
# (C, tens of us per request) instead of snmpsimd (~2 ms), so the round
# time is the pollers', not the agents'.
# The exporter is scraped by curl --parallel (C): a Python client spent
# more CPU than the exporter once the agents were fast.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"
B=$1; N=${2:-500}; M=${3:-24}; R=${4:-5}; A=${5:-2}
BENCH=$B/tests/pdu/snmp_bench
. "$(dirname "$0")/../pdu/snmp_lib.sh"
erg_need snmpsimd snmpget python3 prometheus-snmp-exporter curl
python3 - "$PDU_TMP" "$N" "$M" "$A" <<'PY'
import os, sys
d, n, m, a = sys.argv[1], *map(int, sys.argv[2:])
b = "1.3.6.1.4.1.318.1.1.26"
for k in range(1, n + 1):
    agent = (k - 1) % a
    os.makedirs(f"{d}/data{agent}", exist_ok=True)
    rows = [("1.3.6.1.2.1.1.1.0", 4, f"bench PDU {k}"), ("1.3.6.1.2.1.1.2.0", 6, "1.3.6.1.4.1.318.1.3.4.6"),
            (f"{b}.4.2.1.6.1", 2, m)]
    for col in (3, 7, 11):
        for i in range(1, m + 1):
            v = f"pdu{k}-o{i}" if col == 3 else (k * 7 + i * 13) % 500 if col == 7 else k * 1000 + i
            rows.append((f"{b}.9.4.3.1.{col}.{i}", 4 if col == 3 else 2, v))
    with open(f"{d}/data{agent}/pdu{k:04d}.snmprec", "w") as f:
        for o, t, v in rows:
            f.write(f"{o}|{t}|{v}\n")
with open(f"{d}/snmp.yml", "w") as y:
    for k in range(1, n + 1):
        y.write(f"pdu{k:04d}:\n  get:\n")
        for col in (7, 11):
            for i in range(1, m + 1):
                y.write(f"  - {b}.9.4.3.1.{col}.{i}\n")
        y.write("  metrics:\n")
        for name, col in (("rPDU2OutletMeteredStatusPower", 7), ("rPDU2OutletMeteredStatusEnergy", 11)):
            y.write(f"  - name: {name}\n    oid: {b}.9.4.3.1.{col}\n    type: gauge\n    help: {name}\n"
                    "    indexes:\n    - labelname: rPDU2OutletMeteredStatusIndex\n      type: gauge\n")
        y.write(f"  version: 2\n  retries: 0\n  timeout: 10s\n  auth:\n    community: pdu{k:04d}\n")
PY
: >"$PDU_TMP/targets"
PORTS=()
for a in $(seq 0 $((A - 1))); do
  p=$(bench_port $((a + 1))); PORTS+=("$p")
  if [ "${SNMP_AGENT:-snmpsimd}" = fast ]; then
    "$B/tests/pdu/snmp_bench_agent" "$p" "$N" "$M" &
    PDU_PIDS="$PDU_PIDS $!"
    for _ in $(seq 1 50); do
      snmpget -v2c -c pdu0001 -t 0.2 -r 0 127.0.0.1:"$p" 1.3.6.1.2.1.1.2.0 >/dev/null 2>&1 && break
      sleep 0.1
    done
  else
    pdu_snmpsimd "$PDU_TMP/data$a" "$p"
  fi
  for f in "$PDU_TMP"/data$a/*.snmprec; do
    echo "127.0.0.1 $p $(basename "$f" .snmprec)" >>"$PDU_TMP/targets"
  done
done
echo "== load source: ${SNMP_AGENT:-snmpsimd}, $A processes"
# One exporter round through curl: URL list and outputs, timed, counted.
exporter_round() { # CONC -> "SECONDS VALUES FAILED"
  local conc=$1 t0 t1
  rm -rf "$PDU_TMP/scrape"; mkdir -p "$PDU_TMP/scrape"
  awk -v ep="$EP" -v d="$PDU_TMP/scrape" '{ printf "url = \"http://127.0.0.1:%s/snmp?target=%s:%s&module=%s\"\noutput = \"%s/%s\"\n", ep, $1, $2, $3, d, $3 }' \
    "$PDU_TMP/targets" >"$PDU_TMP/curl.cfg"
  t0=$(date +%s.%N)
  curl -s --no-progress-meter --max-time 60 --parallel --parallel-max "$conc" -K "$PDU_TMP/curl.cfg" 2>/dev/null || true
  t1=$(date +%s.%N)
  local vals fails
  vals=$(cat "$PDU_TMP"/scrape/* 2>/dev/null | grep -c '^rPDU2OutletMetered' || true)
  fails=$(( $(wc -l <"$PDU_TMP/targets") - $(grep -l '^rPDU2OutletMetered' "$PDU_TMP"/scrape/* 2>/dev/null | wc -l) ))
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $vals $fails"
}
exporter_rounds() { # CONC LABEL: R rounds, one line each, then the median
  local conc=$1 times=()
  for r in $(seq 1 "$R"); do
    read -r t v f < <(exporter_round "$conc")
    echo "round $r: $t s, $v values (want $((2 * M * N))), $f failed scrapes"
    times+=("$t")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v n="$R" -v c="$conc" -v N="$N" -v M="$M" \
    '{ a[NR] = $1 } END { printf "median %.3f s for %d PDUs x %d outlets (snmp_exporter, %d in flight)\n", a[int((n + 1) / 2)], N, M, c }'
}
sort -k3 -o "$PDU_TMP/targets" "$PDU_TMP/targets"
echo "== warm-up (snmpsimd indexes its data files on first use)"
"$BENCH" "$PDU_TMP/targets" 2 "$M" | tail -1
echo "== erg_pdu_snmp_poll_many"
"$BENCH" "$PDU_TMP/targets" "$R" "$M" | tee "$PDU_TMP/erg.txt"
# The in-flight window: does 64 hold the poller back, or the agents?
for w in ${INFLIGHT_SWEEP:-16 32 128 256}; do
  echo "== erg_pdu_snmp_poll_many, $w requests in flight"
  "$BENCH" "$PDU_TMP/targets" "$R" "$M" --inflight "$w" |
    awk '/^round/ { split($5, a, "/"); if (min == "" || a[1] + 0 < min) min = a[1] + 0 }
         /^median/ { print $0 "; fewest PDUs read in a round: " min }' | tee -a "$PDU_TMP/sweep.txt"
done
echo "== erg, sequential blocking polls"
"$BENCH" "$PDU_TMP/targets" "$R" "$M" --sequential | tee "$PDU_TMP/seq.txt"
EP=$(bench_port 0)
prometheus-snmp-exporter --config.file="$PDU_TMP/snmp.yml" --web.listen-address=127.0.0.1:"$EP" \
  >"$PDU_TMP/exporter.log" 2>&1 &
PDU_PIDS="$PDU_PIDS $!"
for _ in $(seq 1 100); do
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$EP/')" 2>/dev/null && break
  sleep 0.1
done
# On a shared machine the agents' share of the CPU drifts: erg and the
# exporter (64 in flight) take turns, PASSES times, and each keeps its best
# median, so both are measured under the same conditions.
for pass in $(seq 1 "${PASSES:-1}"); do
  echo "== pass $pass: erg_pdu_snmp_poll_many"
  "$BENCH" "$PDU_TMP/targets" "$R" "$M" | tail -1 | tee -a "$PDU_TMP/erg_pass.txt"

  echo "== pass $pass: prometheus-snmp-exporter, 64 scrapes in flight"
  exporter_rounds 64 | tail -1 | tee -a "$PDU_TMP/exp_pass.txt"
done
for C in 64 "$N"; do
echo "== prometheus-snmp-exporter, $C scrapes in flight"
exporter_rounds "$C" | tee "$PDU_TMP/exp$C.txt"
done
if [ "${PASSES:-1}" -gt 1 ]; then
  python3 - "$PDU_TMP/erg_pass.txt" "$PDU_TMP/exp_pass.txt" <<'PY'
import sys
e = [float(l.split()[1]) for l in open(sys.argv[1])]
x = [float(l.split()[1]) for l in open(sys.argv[2])]
print("== interleaved passes (median per pass): erg", e, "exporter-64", x)
print(f"best: erg {min(e):.3f} s, snmp_exporter {min(x):.3f} s ({min(x)/min(e):.1f}x); "
      f"pairwise ratios {[round(b / a, 1) for a, b in zip(e, x)]}")
PY
fi
e=$(awk '/^median/{print $2}' "$PDU_TMP/erg.txt")
s=$(awk '/^median/{print $2}' "$PDU_TMP/seq.txt")
x=$(awk '/^median/{print $2}' "$PDU_TMP/exp64.txt")
xb=$(awk '/^median/{print $2}' "$PDU_TMP/exp$N.txt")
python3 -c "
e,s,x,xb=$e,$s,$x,$xb
print(f'== summary: {$N} PDUs x {$M} outlets, {$A} ${SNMP_AGENT:-snmpsimd} agent processes, median of {$R} rounds')
print(f'erg poll_many {e:.3f} s | erg sequential {s:.3f} s ({s/e:.1f}x) | snmp_exporter, 64 in flight {x:.3f} s ({x/e:.1f}x) | snmp_exporter, all {$N} at once {xb:.3f} s ({xb/e:.1f}x)')"
