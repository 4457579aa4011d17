#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# BMC polling at scale (issue 33 item 7; docs/benchmarks.md, docs/scale.md):
# one ergd, pinned to one core (taskset -c 0), polls N SIMULATED Redfish
# BMCs every POLL s, each answering DELAY s late (erg-pdusim --redfish on
# the DL325 recording: a session each, PowerControl; one epoll simulator,
# every ergd meter its own session and connection). After every meter's
# first reading it measures ROUNDS rounds: ergd's CPU seconds per round,
# peak RSS, each meter's polls (all must poll every round), the slowest
# poll, and the late seconds the grid dropped (must be 0).
# Then, in the same invocation, the IPMI side against SIMULATED DCMI BMCs
# (pdusim/dcmi_bmc.py, pyghmi; DELAY s late, without holding the others):
# M_IPMI BMCs polled by ergd's IPMI pool ([collector] ipmi_poll_threads),
# and CEEMS's way, `ipmi-dcmi --get-system-power-statistics` run per node
# (M_IPMI processes a round, IPMI_PAR at once), and
# prometheus-ipmi-exporter where it is installed. Prints the ratios.
# usage: bmc_scale.sh [--port-base PORT] BUILD_DIR [N=5000] [DELAY=1] [ROUNDS=3] [POLL=10]
#   env M_IPMI (default 200, 0 skips), IPMI_PAR (64), IPMI_THREADS (ergd's
#   pool; default M_IPMI x DELAY / POLL x 2, at least 4), SMOKE=1 (ctest:
#   asserts and exits 1 when a meter missed a round or a cell was late),
#   PERF_OUT=FILE (perf record -e cpu-clock -g of ergd over the measured
#   rounds, into FILE; `perf report -i FILE --no-children`).
# The simulator runs on the other core (taskset -c 1) where there is one.
# Ports (--port-base or ERG_BENCH_PORT_BASE; bench_lib.sh): +0 ergd's ZMQ,
# +1 ergd's HTTP, +2 the Redfish simulator, +3 the IPMI simulator (UDP),
# +4 prometheus-ipmi-exporter.
# SMOKE=1 without --port-base: free ports (the ctest pdu.bmc_scale).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/bench_lib.sh"
# The ctest smoke variant (SMOKE=1 without --port-base) takes free ports.
if [ "${SMOKE:-0}" = 1 ] && [ "${1:-}" != --port-base ] && [ -z "${ERG_BENCH_PORT_BASE:-}" ]; then
  SMOKE_PORTS=1
else
  bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"
fi
B=$(cd "$1" && pwd); N=${2:-5000}; DELAY=${3:-1}; ROUNDS=${4:-3}; POLL=${5:-10}
M_IPMI=${M_IPMI:-200}; IPMI_PAR=${IPMI_PAR:-64}
REC=${ERG_REDFISH_RECORDINGS:-$HERE/../../../shared/fixtures/redfish-recordings}
. "$HERE/../pdu/snmp_lib.sh"
[ -d "$REC/cray-DL325" ] || { echo "SKIP: no Redfish recordings at $REC"; exit 77; }
erg_need curl python3 taskset
if [ "${SMOKE_PORTS:-0}" = 1 ]; then
  ZP=$(free_port); HP=$(free_port); RP=$(free_port); IP=$(free_udp_port); XP=$(free_port)
else
  ZP=$(bench_port 0); HP=$(bench_port 1); RP=$(bench_port 2); IP=$(bench_port 3); XP=$(bench_port 4)
fi
SMOKE=${SMOKE:-0}; WARM=$((SMOKE ? 1 : 2))
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
printf 's3cret\n' >"$PDU_TMP/pw"; chmod 600 "$PDU_TMP/pw"
fail=0

# Each BMC its own address (127.1.X.Y; the simulator then listens on all
# addresses, 0.0.0.0): as real BMCs, one connection per host. curl keeps
# the connections to one host:port in one bundle that it scans for a free
# one at each request, so 5,000 BMCs behind one address cost ergd O(N) a
# request, an artefact of the simulation. Up to 500 BMCs share 127.0.0.1.
if [ "$N" -gt 500 ]; then RF_BIND=0.0.0.0; else RF_BIND=127.0.0.1; fi
rf_host() { if [ "$RF_BIND" = 0.0.0.0 ]; then echo "127.1.$(($1 / 250)).$(($1 % 250 + 1))"; else echo 127.0.0.1; fi; }
SIM_CPU=(); [ "$(nproc)" -gt 1 ] && SIM_CPU=(taskset -c 1)
"${SIM_CPU[@]}" "$B/pdusim/erg-pdusim" --redfish "$REC/cray-DL325" --redfish-http "$RF_BIND:$RP" --node n1 \
  --redfish-channel /redfish/v1/Chassis/1=n1 --redfish-user admin:s3cret \
  --redfish-delay "$DELAY" --update 1 >"$PDU_TMP/rfsim.log" 2>&1 &
SIM_PID=$!; PDU_PIDS="$PDU_PIDS $SIM_PID"
for _ in $(seq 1 50); do curl -sf -o /dev/null "http://127.0.0.1:$RP/erg-sim/stats" && break; sleep 0.1; done

HZ=$(getconf CLK_TCK)
# stat_cpu DIR [1]: utime+stime (1: and its waited-for children's) in seconds of /proc/PID or /proc/PID/task/TID;
# status 1 when it has exited (a thread may end between the listing and the
# read: ergd's start-up loaders, a render's). Fields counted after the
# command's ")": a thread name may hold spaces.
stat_cpu() {
  local st
  st=$(cat "$1/stat" 2>/dev/null) && [ -n "$st" ] || return 1
  awk -v t="$HZ" -v c="${2:-0}" '{print ($12 + $13 + c * ($14 + $15)) / t}' <<<"${st##*) }"
}
# proc_cpu PID [NAME [1]]: the process's CPU seconds (1: and its children's). One of the run's processes
# gone is a failure of the run, said as such (not awk's "cannot open").
proc_cpu() {
  stat_cpu "/proc/$1" "${3:-0}" ||
    { echo "FAIL: ${2:-process} $1 exited during the run (its log in $PDU_TMP)" >&2; return 1; }
}
# thr_cpu PID NAME: CPU seconds of PID's threads named NAME (the BMC pollers);
# threads gone meanwhile are left out.
thr_cpu() {
  local t s=0 c
  for t in /proc/"$1"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] || continue
    c=$(stat_cpu "$t") || continue
    s=$(awk -v s="$s" -v c="$c" 'BEGIN {print s + c}')
  done
  echo "$s"
}
# thr_all PID: "name cpu_seconds" per thread name, summed (ergd's threads)
thr_all() {
  local t n c
  for t in /proc/"$1"/task/*; do
    n=$(cat "$t/comm" 2>/dev/null) && c=$(stat_cpu "$t") || continue
    echo "$n $c"
  done | awk '{s[$1] += $2} END {for (n in s) print n, s[n]}' | sort
}
proc_hwm() { awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
metrics() { curl -sf --max-time 20 "http://127.0.0.1:$HP/metrics"; }
# polls_min_count FILE: the fewest polls of any source, and how many sources
summ() {
  python3 - "$@" <<'PY'
import re, sys
def parse(f):
    m = {}
    for l in open(f):
        r = re.match(r'(erg_\w+)\{(?:source|node)="([^"]+)"(?:,reason="(\w+)")?\} (\S+)', l)
        if r:
            m[(r.group(1), r.group(2), r.group(3))] = float(r.group(4))
    return m
a = parse(sys.argv[1]); b = parse(sys.argv[2]) if len(sys.argv) > 2 else a
src = sorted({k[1] for k in b if k[0] == "erg_source_polls_total"})
d = [b[("erg_source_polls_total", s, None)] - (a.get(("erg_source_polls_total", s, None), 0) if a is not b else 0) for s in src]
err = sum(b.get(("erg_source_poll_errors_total", s, None), 0) - (a.get(("erg_source_poll_errors_total", s, None), 0) if a is not b else 0) for s in src)
dur = max([b.get(("erg_source_poll_duration_seconds", s, None), 0) for s in src] or [0])
late = sum(v for k, v in b.items() if k[0] == "erg_grid_dropped_seconds_total" and k[2] == "late")
print(len(src), int(min(d or [0])), int(max(d or [0])), int(err), f"{dur:.2f}", int(late))
PY
}

# ---- Redfish: one ergd, N BMCs ----
{
  printf '[collector]\nlisten = tcp://127.0.0.1:%s\nhttp = 127.0.0.1:%s\ndata_dir = %s/data\n' "$ZP" "$HP" "$PDU_TMP"
  # Small archives (1 MB per node.rrd, as docs/scale.md's 5,000 nodes).
  printf 'poll_seconds = %s\nstep_seconds = %s\narchive_days = 0.25 0 0 0\n' "$POLL" "$POLL"
  for i in $(seq 1 "$N"); do
    printf '[meter.b%d]\ndriver = redfish\nhost = http://%s:%s\nuser = admin\npassword_file = %s/pw\n[node.n%d]\npower = b%d\n' \
      "$i" "$(rf_host "$i")" "$RP" "$PDU_TMP" "$i" "$i"
  done
} >"$PDU_TMP/ergd.conf"
t_start=$(date +%s.%N)
taskset -c 0 "$B/collector/ergd" -c "$PDU_TMP/ergd.conf" 2>"$PDU_TMP/ergd.log" &
EP=$!; PDU_PIDS="$PDU_PIDS $EP"
# Every meter's first reading: login + 4 GETs of discovery + 1 poll, DELAY
# each, 256 opens at once (meters_bmc.c): ~N / 256 x 6 x DELAY s.
ready=0
for _ in $(seq 1 $((10 + 4 * POLL + N * ${DELAY%.*} / 64))); do
  sleep $((SMOKE ? 1 : 3))
  kill -0 "$EP" 2>/dev/null || { echo "FAIL: ergd exited"; tail -20 "$PDU_TMP/ergd.log"; exit 1; }
  metrics >"$PDU_TMP/m0" 2>/dev/null || continue
  read -r ns lo _ <<<"$(summ "$PDU_TMP/m0")"
  if [ "$ns" = "$N" ] && [ "$lo" -ge 1 ]; then ready=1; break; fi
done
t_ready=$(date +%s.%N)
[ $ready = 1 ] || { echo "FAIL: not every meter read within the wait ($(summ "$PDU_TMP/m0"))"; tail "$PDU_TMP/ergd.log"; exit 1; }
# Two more steps: the nodes' archives are created meanwhile (first start).
sleep $((WARM * POLL))
metrics >"$PDU_TMP/m0"; c0=$(proc_cpu "$EP" ergd); r0=$(thr_cpu "$EP" erg-redfish); thr_all "$EP" >"$PDU_TMP/t0"
s0=$(proc_cpu "$SIM_PID" "the Redfish simulator")
if [ -n "${PERF_OUT:-}" ]; then
  perf record -q -e cpu-clock -g -p "$EP" -o "$PERF_OUT" -- sleep $((ROUNDS * POLL)) >/dev/null 2>&1 || sleep $((ROUNDS * POLL))
else
  sleep $((ROUNDS * POLL))
fi
c1=$(proc_cpu "$EP" ergd); r1=$(thr_cpu "$EP" erg-redfish); metrics >"$PDU_TMP/m1"; thr_all "$EP" >"$PDU_TMP/t1"
s1=$(proc_cpu "$SIM_PID" "the Redfish simulator")
echo "redfish ergd: CPU s per round by thread: $(join "$PDU_TMP/t0" "$PDU_TMP/t1" | awk -v r="$ROUNDS" '{d = ($3 - $2) / r; if (d >= 0.005) printf "%s %.3f, ", $1, d}')" \
  "simulator $(python3 -c "print(f'{($s1 - $s0) / $ROUNDS:.3f}')") s per round"
read -r ns lo hi err dur late <<<"$(summ "$PDU_TMP/m0" "$PDU_TMP/m1")"
hwm=$(proc_hwm "$EP")
fds=$(ls /proc/"$EP"/fd | wc -l); thr=$(ls /proc/"$EP"/task | wc -l)
rf_cpu=$(python3 -c "print(f'{($c1 - $c0) / $ROUNDS:.3f}')")
rf_thr=$(python3 -c "print(f'{($r1 - $r0) / $ROUNDS:.3f}')")
echo "redfish ergd: $N BMCs (answer ${DELAY} s late), poll ${POLL} s, ${ROUNDS} rounds on 1 core:" \
  "first reading of all after $(python3 -c "print(f'{$t_ready - $t_start:.0f}')") s;" \
  "polls per meter $lo..$hi, errors $err, slowest poll ${dur} s, late grid seconds $late;" \
  "CPU ${rf_cpu} s/round (the Redfish poll thread ${rf_thr} s), peak RSS ${hwm} MiB, ${fds} fds, ${thr} threads"
if [ "$err" != 0 ]; then
  echo "redfish ergd: what failed (ergd's log, most said first):"
  sed -n 's/.*source b[0-9]*: //p' "$PDU_TMP/ergd.log" | sed 's/[0-9][0-9.]* s/N s/g; s/127\.[0-9.]*:/HOST:/g' | sort | uniq -c | sort -rn | head -5
fi
if [ "$lo" -lt $((ROUNDS - 1)) ] || [ "$late" != 0 ]; then
  echo "FAIL: a meter missed rounds ($lo of $ROUNDS) or cells were late ($late s)"; fail=1
fi
kill -TERM "$EP"; t_stop=$(date +%s.%N); rc=0; wait "$EP" || rc=$?
if [ $rc != 0 ] || grep -q Sanitizer "$PDU_TMP/ergd.log"; then
  echo "FAIL: ergd exit $rc at SIGTERM"; grep -A30 Sanitizer "$PDU_TMP/ergd.log" | head -40; fail=1
fi
echo "redfish ergd: stopped (every session logged out) in $(python3 -c "print(f'{$(date +%s.%N) - $t_stop:.1f}')") s;" \
  "simulator: $(curl -sf "http://127.0.0.1:$RP/erg-sim/stats")"
if [ "$SMOKE" = 1 ]; then
  # Concurrency: one thread polled N meters DELAY s late within a round.
  python3 -c "import sys; sys.exit(0 if $dur < $POLL else 1)" ||
    { echo "FAIL: slowest poll $dur s >= the period"; fail=1; }
fi

# ---- IPMI: ergd's pool, and ipmi-dcmi per node ----
if [ "$M_IPMI" -gt 0 ]; then
  PY=/usr/bin/python3
  if ! "$PY" -c 'import pyghmi.ipmi.bmc' 2>/dev/null; then
    echo "ipmi: skipped (python3-pyghmi not installed)"
  else
    "$PY" "$HERE/../../pdusim/dcmi_bmc.py" --port "$IP" --delay "$DELAY" --async-delay \
      >"$PDU_TMP/ipmisim.log" 2>&1 &
    PDU_PIDS="$PDU_PIDS $!"
    for _ in $(seq 1 100); do grep -q '^ready' "$PDU_TMP/ipmisim.log" && break; sleep 0.1; done
    printf 'password\n' >"$PDU_TMP/ipw"; chmod 600 "$PDU_TMP/ipw"
    TH=${IPMI_THREADS:-$(( M_IPMI * ${DELAY%.*} * 2 / POLL ))}; [ "$TH" -ge 4 ] || TH=4
    {
      printf '[collector]\nlisten = tcp://127.0.0.1:%s\nhttp = 127.0.0.1:%s\ndata_dir = %s/idata\n' "$ZP" "$HP" "$PDU_TMP"
      printf 'poll_seconds = %s\nstep_seconds = %s\nipmi_poll_threads = %s\narchive_days = 0.25 0 0 0\n' "$POLL" "$POLL" "$TH"
      for i in $(seq 1 "$M_IPMI"); do
        printf '[meter.i%d]\ndriver = ipmi\nhost = 127.0.0.1:%s\nuser = admin\npassword_file = %s/ipw\ntimeout_seconds = %s\n[node.n%d]\npower = i%d\n' \
          "$i" "$IP" "$PDU_TMP" "$((POLL / 2))" "$i" "$i"
      done
    } >"$PDU_TMP/ipmi.conf"
    taskset -c 0 "$B/collector/ergd" -c "$PDU_TMP/ipmi.conf" 2>"$PDU_TMP/ipmi-ergd.log" &
    EP=$!; PDU_PIDS="$PDU_PIDS $EP"
    ready=0
    for _ in $(seq 1 $((10 + 3 * POLL))); do
      sleep 3
      metrics >"$PDU_TMP/i0" 2>/dev/null || continue
      read -r ns lo _ <<<"$(summ "$PDU_TMP/i0")"
      if [ "$ns" = "$M_IPMI" ] && [ "$lo" -ge 1 ]; then ready=1; break; fi
    done
    if [ $ready = 1 ]; then
      sleep $((WARM * POLL))
      metrics >"$PDU_TMP/i0"; c0=$(proc_cpu "$EP" "ergd (ipmi)"); q0=$(thr_cpu "$EP" erg-ipmi)
      sleep $((ROUNDS * POLL))
      c1=$(proc_cpu "$EP" "ergd (ipmi)"); q1=$(thr_cpu "$EP" erg-ipmi); metrics >"$PDU_TMP/i1"
      read -r ns lo hi err dur late <<<"$(summ "$PDU_TMP/i0" "$PDU_TMP/i1")"
      ip_cpu=$(python3 -c "print(f'{($c1 - $c0) / $ROUNDS:.3f}')"); ip_hwm=$(proc_hwm "$EP")
      ip_thr=$(python3 -c "print(f'{($q1 - $q0) / $ROUNDS:.3f}')")
      echo "ipmi ergd: $M_IPMI BMCs on $TH poll threads, ${ROUNDS} rounds: polls per meter $lo..$hi," \
        "errors $err, slowest poll ${dur} s, late grid seconds $late; CPU ${ip_cpu} s/round (the pool ${ip_thr} s)," \
        "peak RSS ${ip_hwm} MiB, $(ls /proc/"$EP"/task | wc -l) threads"
      if [ "$lo" -lt $((ROUNDS - 1)) ] || [ "$late" != 0 ]; then
        echo "FAIL: an IPMI meter missed rounds ($lo of $ROUNDS) or cells were late"; fail=1
      fi
    else
      echo "FAIL: ipmi: not every meter read ($(summ "$PDU_TMP/i0"))"; tail "$PDU_TMP/ipmi-ergd.log"; fail=1
    fi
    kill -TERM "$EP"; rc=0; wait "$EP" || rc=$?
    if [ $rc != 0 ] || grep -q Sanitizer "$PDU_TMP/ipmi-ergd.log"; then
      echo "FAIL: ergd (ipmi) exit $rc at SIGTERM"; grep -A30 Sanitizer "$PDU_TMP/ipmi-ergd.log" | head -40; fail=1
    fi
    if command -v ipmi-dcmi >/dev/null; then
      # CEEMS's way: a process per node and reading. Timed by GNU time
      # (CPU of all children, the largest RSS), IPMI_PAR at once.
      seq 1 "$M_IPMI" >"$PDU_TMP/nodes"
      /usr/bin/time -f '%e %U %S %M' -o "$PDU_TMP/dcmi.time" \
        xargs -P "$IPMI_PAR" -I{} ipmi-dcmi -h "127.0.0.1:$IP" -u admin -p password -D LAN_2_0 \
        -I 3 --get-system-power-statistics >"$PDU_TMP/dcmi.out" 2>"$PDU_TMP/dcmi.err" <"$PDU_TMP/nodes" || true
      read -r wall u s rss <"$PDU_TMP/dcmi.time"
      ok=$(grep -c "Current Power" "$PDU_TMP/dcmi.out" || true)
      dc_cpu=$(python3 -c "print(f'{$u + $s:.3f}')")
      echo "ipmi-dcmi per node: $M_IPMI BMCs ($ok answered), $IPMI_PAR at once: one round ${wall} s wall," \
        "CPU ${dc_cpu} s/round, largest process RSS $((rss / 1024)) MiB"
      python3 -c "print(f'ratio ipmi-dcmi / ergd ipmi pool: CPU per round x{$dc_cpu / max($ip_cpu, 1e-3):.1f}')" 2>/dev/null || true
      python3 -c "print(f'ratio ipmi-dcmi per node / ergd redfish, CPU per BMC and round: x{($dc_cpu / $M_IPMI) / max($rf_cpu / $N, 1e-9):.1f}')"
    else
      echo "ipmi-dcmi: not installed (freeipmi-tools, scripts/deps.sh ERG_TEST_PKGS)"
    fi
    if command -v prometheus-ipmi-exporter >/dev/null; then
      # The exporter runs freeipmi's ipmi-dcmi per scrape: M_IPMI scrapes
      # (IPMI_PAR at once) are one round; CPU of it and its children.
      printf 'modules:\n  dcmi:\n    user: admin\n    pass: password\n    driver: LAN_2_0\n    privilege: user\n    timeout: %s\n    collectors:\n    - dcmi\n' \
        "$((POLL * 1000))" >"$PDU_TMP/ipmi_exporter.yml"
      prometheus-ipmi-exporter --config.file="$PDU_TMP/ipmi_exporter.yml" \
        --web.listen-address=127.0.0.1:"$XP" >"$PDU_TMP/exporter.log" 2>&1 &
      XPID=$!; PDU_PIDS="$PDU_PIDS $XPID"
      for _ in $(seq 1 50); do curl -sf -o /dev/null "http://127.0.0.1:$XP/metrics" && break; sleep 0.1; done
      x0=$(proc_cpu "$XPID" prometheus-ipmi-exporter 1)
      t0=$(date +%s.%N)
      seq 1 "$M_IPMI" | xargs -P "$IPMI_PAR" -I{} curl -s --max-time 60 -o "$PDU_TMP/x.{}" \
        "http://127.0.0.1:$XP/ipmi?module=dcmi&target=127.0.0.1:$IP" || true
      t1=$(date +%s.%N)
      x1=$(proc_cpu "$XPID" prometheus-ipmi-exporter 1)
      xok=$(cat "$PDU_TMP"/x.* | grep -c '^ipmi_dcmi_power_consumption_watts ' || true)
      xr=$(proc_hwm "$XPID")
      ex_cpu=$(python3 -c "print(f'{$x1 - $x0:.3f}')")
      echo "prometheus-ipmi-exporter $(prometheus-ipmi-exporter --version 2>&1 | head -1 | awk '{print $3}'):" \
        "$M_IPMI BMCs ($xok answered), $IPMI_PAR scrapes at once: one round" \
        "$(python3 -c "print(f'{$t1 - $t0:.1f}')") s wall, CPU ${ex_cpu} s/round (exporter and its ipmi-dcmi)," \
        "exporter peak RSS ${xr} MiB"
      python3 -c "print(f'ratio ipmi-exporter / ergd ipmi pool: CPU per round x{$ex_cpu / max($ip_cpu, 1e-3):.1f}')" 2>/dev/null || true
      kill "$XPID" 2>/dev/null || true
    else
      echo "prometheus-ipmi-exporter: not installed (scripts/deps.sh ERG_BENCH_PKGS)"
    fi
  fi
fi
exit $fail
