#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end on loopback: erg-pdusim (SIMULATED Modbus meter following this
# machine's load) -> ergd <- erg-agent (/proc) -> RRD -> rrdtool fetch.
# Checks that node power and the per-process split are stored and add up.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3
. "$(dirname "$0")/lib.sh"
for tool in rrdtool curl ss; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done

erg_setup it
erg_ports
erg_ergd_conf <<CONF
step_seconds = 5
settle_steps = 1
poll_seconds = 0.5
page_interval_seconds = 5

$(erg_sim_meter)

[node.it-node]
power = sim:1
idle_watts = 50
CONF

# The machine's busy CPU seconds (every CPU; /proc/stat is in clock ticks).
busy_cpu() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print ($2+$3+$4+$7+$8+$9) / hz; exit }' /proc/stat; }
# Waits (at most $2 s) until the command $1 succeeds; 1 if it never does.
wait_for() { local i; for ((i = 0; i < $2 * 2; i++)); do eval "$1" && return 0; sleep 0.5; done; return 1; }
node_dir="$work/data/nodes/it-node"
t_start=$(date +%s)
erg_start_pdusim --node it-node --idle 50 --slope 100 --update 0.5
grep -q SIMULATED "$work/pdusim.log"
erg_start_ergd
erg_start_agent it-node --interval 1

# A recognisable load: one busy process for three cells. Its CPU time and
# the machine's over the same while give the share it should get: it
# starts on the 5-s grid, so that cells and measure cover the same time
# (other load on the machine comes and goes).
sleep 3
sleep "$(awk -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", 5 - n % 5 }')"
t_load_start=$(date +%s)
cpu0=$(busy_cpu)
( timeout 15 sha256sum /dev/zero >/dev/null || true; times >"$work/sha.times" )
cpu1=$(busy_cpu)
t_load_end=$(date +%s)
# Children's user and system time: the second line of times, "XmY.YYYs XmY.YYYs".
sha_cpu=$(awk 'NR == 2 { n = split($0, f, /[ms ]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }' "$work/sha.times")
# Written, not slept for: the cell after the load's end is in the archive
# (on a loaded machine or under ASan cells are final seconds later), and the
# pages (the first render, all graphs, took over 20 s there).
last_update() { rrdtool last "$node_dir/node.rrd" 2>/dev/null || echo 0; }
wait_for '[ "$(last_update)" -ge $((t_load_end + 5)) ]' 90 ||
  { echo "FAIL: no cell after the load's end (last $(last_update), load ended $t_load_end)"; cat "$work/ergd.log"; exit 1; }
t_end=$(last_update)
wait_for 'curl -sf "http://127.0.0.1:$HP/" -o "$work/index.html"' 90 ||
  { echo "FAIL: no page at http://127.0.0.1:$HP/"; ls -l "$work/data/www"; cat "$work/ergd.log"; exit 1; }
curl -sf "http://127.0.0.1:$HP/metrics" -o "$work/metrics.txt" || { echo "FAIL: no /metrics"; exit 1; }
for p in "${pids[@]}"; do kill "$p"; done
wait "${pids[@]}" 2>/dev/null || true
pids=()

test -f "$node_dir/node.rrd" || { echo "FAIL: no node.rrd"; ls -R "$work/data"; cat "$work/ergd.log"; exit 1; }
rrdtool fetch "$node_dir/node.rrd" AVERAGE -r 5 -s "$t_start" -e "$t_end" >"$work/node.txt"
sha=$(key_rrd "$node_dir/command" sha256sum)
sys=$(key_rrd "$node_dir/command" "[system]")
test -n "$sha" && test -f "$sha" || { echo "FAIL: no archive for sha256sum"; cat "$node_dir/command/index.tsv"; exit 1; }
rrdtool fetch "$sha" AVERAGE -r 5 -s "$t_start" -e "$t_end" >"$work/sha.txt"
# Sum of every command archive, per timestamp.
for f in "$node_dir"/command/*.rrd; do rrdtool fetch "$f" AVERAGE -r 5 -s "$t_start" -e "$t_end"; done \
  >"$work/keys.txt"
# sha256sum's share of the machine's busy CPU while it ran.
cpu_share=$(awk -v s="$sha_cpu" -v a="$cpu0" -v b="$cpu1" 'BEGIN { print (b > a ? s / (b - a) : 0) }')

trap 'echo "--- ergd log"; cat "$work/ergd.log"' ERR
python3 - "$work" "$cpu_share" "$t_load_start" "$t_load_end" <<'PY'
import sys, math, collections
work = sys.argv[1]
cpu_share, t_load_start, t_load_end = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def rows(path):
    out = {}
    lines = open(path).read().split("\n")
    names = lines[0].split()
    for l in lines[1:]:
        if ":" not in l: continue
        t, vals = l.split(":", 1)
        v = [float(x) if x.strip() not in ("-nan", "nan") else math.nan for x in vals.split()]
        out[int(t)] = dict(zip(names, v))
    return out
node = rows(f"{work}/node.txt")
sha = rows(f"{work}/sha.txt")
keysum = collections.defaultdict(float)
cur = None
for l in open(f"{work}/keys.txt"):
    if ":" in l:
        t, v = l.split(":", 1)
        v = v.split()[0]  # watts (then the interval's sd, var)
        if v not in ("-nan", "nan"):
            keysum[int(t)] += float(v)
good = [t for t, r in node.items() if not math.isnan(r["measured"])]
assert len(good) >= 3, f"too few measured cells: {node}"
checked = 0
e_sha = e_dyn = 0.0
for t in good:
    r = node[t]
    m, idle, dyn = r["measured"], r["idle"], r["dynamic"]
    assert abs(m - (idle + dyn)) < 1e-6 * max(1, m), (t, r)
    assert 45 <= m <= 155, f"measured {m} outside the simulator's range"
    if t in keysum and keysum[t] > 0:
        # Per-process split adds up to the dynamic power of the cell.
        assert abs(keysum[t] - dyn) < 0.01 * max(1, dyn), (t, keysum[t], dyn)
        checked += 1
    # Cells (5 s, t their end) wholly inside the busy process's life.
    if t - 5 >= t_load_start and t <= t_load_end:
        s = sha.get(t, {}).get("watts", math.nan)
        e_sha += 0 if math.isnan(s) else s
        e_dyn += dyn
assert checked >= 2, f"split checked in only {checked} cells"
# The busy process gets about its share of the machine's busy CPU time (what
# the simulator's power follows), measured beside it: other load on the
# machine competes for the CPUs and takes its own share. Loosely: cell and
# measuring edges differ, and the split weighs CPU time by frequency.
assert e_dyn > 0, "no cell wholly inside the load"
share = e_sha / e_dyn
assert share >= 0.5 * cpu_share, \
    f"sha256sum got {share:.3f} of the dynamic power, its CPU share was {cpu_share:.3f}"
print(f"ok: {len(good)} measured cells, split adds up in {checked}; "
      f"sha256sum {share:.3f} of the dynamic power while it ran, {cpu_share:.3f} of the CPU time")
PY
grep -q 'it-node' "$work/index.html" || { echo "FAIL: index.html lacks the node"; exit 1; }
grep -q '^erg_node_measured_watts{node="it-node"}' "$work/metrics.txt" || { echo "FAIL: metrics"; cat "$work/metrics.txt"; exit 1; }
# The agent's eBPF health counters: a series per node on the eBPF path,
# none on /proc (auto picks eBPF as root with BTF).
bpf_series=$(grep -cE '^erg_agent_bpf_(map_full_drops_total|lost_exit_seconds_total|unseen_switches_total|unsettled_rereads_total)\{node="it-node"\} [0-9.]+$' "$work/metrics.txt" || true)
if grep -q 'collection bpf' "$work/agent-it-node.log"; then
  [ "$bpf_series" = 4 ] || { echo "FAIL: $bpf_series of 4 eBPF health series"; grep erg_agent_bpf "$work/metrics.txt"; exit 1; }
  echo "ok: eBPF health: $(grep -E '^erg_agent_bpf_[a-z_]+\{node="it-node"' "$work/metrics.txt" | tr '\n' ' ')"
else
  [ "$bpf_series" = 0 ] || { echo "FAIL: eBPF health series from a /proc agent"; exit 1; }
fi
if command -v promtool >/dev/null; then
  promtool check metrics <"$work/metrics.txt"
else
  echo "SKIP: promtool (Debian prometheus) missing"; exit 77
fi
