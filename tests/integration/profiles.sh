#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Profile keys of every kind and cluster-wide jobs, end to end. Two virtual
# nodes (cgroup2 groups; erg-agent --scope; erg-pdusim following each
# group's CPU) both run processes of Slurm job 4242 (cgroup job_4242); n1
# also runs a systemd-style unit without a job, n2 a second job 77. With
# top_processes = 2 some keys fold into [other]. From the RRD archives
# (rrdtool fetch), for every node, every kind and every written cell:
# Σ keys == the cell's dynamic power; cluster/job/4242 == n1's + n2's
# job 4242; processes without a job are under [none]; /metrics has the
# per-key and per-job energy counters and passes promtool; the jobs' 95 %
# interval parts (sd, var) add up over nodes as docs/model.md says, and
# every kind's keys have theirs, a key's rows propagated as one.
set -euo pipefail
PDUSIM=$1 ERGD=$2 AGENT=$3 BURNER=$4
. "$(dirname "$0")/lib.sh"
erg_need rrdtool python3 ss curl
erg_cgroup2
"$AGENT" --help 2>&1 | grep -q -- --scope || { echo "SKIP: erg-agent has no --scope"; exit 77; }
tag=erg-prof-$$
groups="$tag-n1/job_4242 $tag-n1/tool.service $tag-n2/job_4242 $tag-n2/job_77 $tag-n1 $tag-n2"
cg_cleanup() { erg_cg_remove $groups; }
erg_setup prof
ERG_CLEANUP=cg_cleanup
for g in $tag-n1 $tag-n2 $tag-n1/job_4242 $tag-n1/tool.service $tag-n2/job_4242 $tag-n2/job_77; do
  mkdir "$CG2/$g" 2>/dev/null || { echo "SKIP: cannot create cgroup $CG2/$g"; exit 77; }
done

STEP=2
erg_ports
erg_ergd_conf <<CONF
step_seconds = $STEP
settle_steps = 1
poll_seconds = 0.5
top_processes = 2
lag_max_seconds = 0
$(erg_sim_meter)
[node.n1]
power = sim:1
idle_watts = 40
[node.n2]
power = sim:2
idle_watts = 40
CONF
erg_start_pdusim --node n1=$SIMPREFIX/$tag-n1 --node n2=$SIMPREFIX/$tag-n2 --idle 40 --slope 100 \
  --update 0.5
erg_start_ergd
for n in n1 n2; do erg_start_agent $n --scope /$tag-$n --interval 0.5; done
sleep 2
LOAD=24
erg_in_cg $tag-n1/job_4242 timeout $LOAD sha256sum /dev/zero & pids+=($!)
erg_in_cg $tag-n1/job_4242 timeout $LOAD "$BURNER" $((LOAD * 2)) 300 jobwork 1 >/dev/null & pids+=($!)
erg_in_cg $tag-n1/tool.service timeout $LOAD md5sum /dev/zero & pids+=($!)
erg_in_cg $tag-n2/job_4242 timeout $LOAD sha1sum /dev/zero & pids+=($!)
erg_in_cg $tag-n2/job_77 timeout $LOAD b2sum /dev/zero & pids+=($!)
sleep $((LOAD + 5 * STEP))
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt"
cg_cleanup
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()

data=$work/data
fetch() { rrdtool fetch "$1" AVERAGE -r $STEP -s end-120 -e now; }
for n in n1 n2; do
  fetch "$data/nodes/$n/node.rrd" >"$work/$n-node.txt"
  fetch "$data/nodes/$n/dynamic_unc/node.rrd" >"$work/$n-dynunc.txt"
  for kind in command job unit container user; do
    d=$data/nodes/$n/$kind
    [ -f "$d/index.tsv" ] || { echo "FAIL: $n has no $kind archives"; ls -R "$data"; exit 1; }
    while IFS=$'\t' read -r safe key; do
      [ -f "$d/$safe.rrd" ] && { echo "== $key"; fetch "$d/$safe.rrd"; }
    done <"$d/index.tsv" >"$work/$n-$kind.txt"
  done
done
d=$data/cluster/job
[ -f "$d/index.tsv" ] || { echo "FAIL: no cluster job archives"; ls -R "$data"; tail "$work/ergd.log"; exit 1; }
while IFS=$'\t' read -r safe key; do
  echo "== $key"; fetch "$d/$safe.rrd"
done <"$d/index.tsv" >"$work/cluster-job.txt"

python3 - "$work" <<'PY'
import math, sys, collections
work = sys.argv[1]

def table(path):
    """rrdtool fetch output -> {t: {column: value}}"""
    out, names = {}, None
    for l in open(path):
        if names is None and l.strip():
            names = l.split(); continue
        if ":" not in l: continue
        t, vals = l.split(":", 1)
        out[int(t)] = dict(zip(names, (float(v) for v in vals.split())))
    return out

def keys(path, col=0):
    """== KEY blocks of watts -> {key: {t: watts}}; col: a later data source
    (a job archive's: 1 its interval's sd, 2 its var; NaN where absent)"""
    out, cur = {}, None
    for l in open(path):
        if l.startswith("== "):
            cur = out.setdefault(l[3:].rstrip("\n"), {}); continue
        if ":" in l and cur is not None:
            t, v = l.split(":", 1)
            v = v.split()
            cur[int(t)] = float(v[col]) if col < len(v) else math.nan
    return out

fail = []
checked = collections.Counter()
per_node_job = {}
for n in ("n1", "n2"):
    node = table(f"{work}/{n}-node.txt")
    for kind in ("command", "job", "unit", "container", "user"):
        k = keys(f"{work}/{n}-{kind}.txt")
        if "[system]" not in k:
            fail.append(f"{n}/{kind}: no [system] archive"); continue
        if kind == "job":
            per_node_job[n] = k
        # Cells the collector wrote keys for: [system] has a value.
        for t, sysw in k["[system]"].items():
            if math.isnan(sysw) or t not in node: continue
            dyn = node[t]["dynamic"]
            if math.isnan(dyn): continue
            s = sum(v.get(t, math.nan) for v in k.values() if not math.isnan(v.get(t, math.nan)))
            if abs(s - dyn) > 1e-6 * max(1.0, dyn) + 1e-6:
                fail.append(f"{n}/{kind} t={t}: sum of keys {s} != dynamic {dyn}")
            checked[(n, kind)] += 1
        if kind == "job" and n == "n1" and "[none]" not in k:
            fail.append("n1/job: the unit's processes (no job) are not under [none]")
        if kind == "unit" and n == "n1" and "tool.service" not in k:
            fail.append(f"n1/unit: no tool.service key ({sorted(k)})")
        if kind == "job" and "4242" not in k:
            fail.append(f"{n}/job: no 4242 key ({sorted(k)})")
        if kind == "command" and n == "n1" and "[other]" not in k:
            fail.append(f"n1/command: top_processes = 2 but no [other] ({sorted(k)})")
for nk, c in sorted(checked.items()):
    if c < 8:
        fail.append(f"{nk}: only {c} cells with keys")

cl = keys(f"{work}/cluster-job.txt")
sums = zeros = 0
for job, nodes in (("4242", ("n1", "n2")), ("77", ("n2",))):
    if job not in cl:
        fail.append(f"cluster: no job {job} ({sorted(cl)})"); continue
    for t, w in cl[job].items():
        parts = [per_node_job[n].get(job, {}).get(t, math.nan) for n in nodes]
        if math.isnan(w) or any(math.isnan(p) for p in parts): continue
        if abs(w - sum(parts)) > 1e-6 * max(1.0, w) + 1e-6:
            fail.append(f"cluster job {job} t={t}: {w} != {' + '.join(map(str, parts))}")
        if job == "4242" and all(p > 1 for p in parts):
            sums += 1
        # After the load: explicit 0 W, not unknown, in all three archives.
        if job == "4242" and w == 0 and all(p == 0 for p in parts):
            zeros += 1
if sums < 5:
    fail.append(f"cluster job 4242 matched both nodes' busy cells only {sums} times")
if zeros < 1:
    fail.append("cluster job 4242: no idle cell written as 0 W after the job ended")
# The jobs' 95 % interval parts (docs/model.md, "Uncertainty"): the data
# sources sd and var of each job archive; the cluster's job 4242 has the
# nodes' sd added linearly and their variances added, > 0 while it runs.
unc = 0
for col, what in ((1, "sd"), (2, "var")):
    clu = keys(f"{work}/cluster-job.txt", col).get("4242", {})
    per = [keys(f"{work}/{n}-job.txt", col).get("4242", {}) for n in ("n1", "n2")]
    for t, w in clu.items():
        parts = [p.get(t, math.nan) for p in per]
        if math.isnan(w) or any(math.isnan(p) for p in parts): continue
        if abs(w - sum(parts)) > 1e-6 * max(1.0, w) + 1e-6:
            fail.append(f"cluster job 4242 {what} t={t}: {w} != {' + '.join(map(str, parts))}")
        unc += all(p > 0 for p in parts)
if unc < 10:
    fail.append(f"job 4242: sd and var > 0 on both nodes in only {unc} cell-sources")
# Without a model the parts are known exactly (docs/model.md,
# "Uncertainty"; idle_policy separate, lag_max_seconds 0): the idle is a
# 20 % guess (sd 8 W), all of it the same in every row, so a job's sd is its
# part F = watts / dynamic of that; its variance per cell is the CPU split's
# misfit F(1 - F) (D / 4)^2 plus the meter's quantum, F^2 x at most 1 W^2.
exact = 0
for n in ("n1", "n2"):
    node = table(f"{work}/{n}-node.txt")
    w = keys(f"{work}/{n}-job.txt").get("4242", {})
    sd, var = keys(f"{work}/{n}-job.txt", 1).get("4242", {}), keys(f"{work}/{n}-job.txt", 2).get("4242", {})
    for t, x in w.items():
        d = node.get(t, {}).get("dynamic", math.nan)
        if math.isnan(x) or math.isnan(d) or not d > 1 or not x > 0: continue
        f = x / d
        if abs(sd.get(t, math.nan) - 8 * f) > 1e-6 * 8 * f + 1e-9:
            fail.append(f"{n} job 4242 t={t}: sd {sd.get(t)} W, the idle guess's part is {8 * f}")
        extra = var.get(t, math.nan) / 2 - f * (1 - f) * (d / 4) ** 2  # var is W^2 x step (2 s)
        if not -1e-6 * d * d <= extra <= f * f * 1.0 + 1e-6:
            fail.append(f"{n} job 4242 t={t}: var {var.get(t)} W^2 s, the split's misfit "
                        f"{2 * f * (1 - f) * (d / 4) ** 2}")
        exact += 1
if exact < 10:
    fail.append(f"job 4242: its interval's parts checked in only {exact} cells")
# Its half-width over the run (the cluster archive's integrals) for /metrics.
csd = keys(f"{work}/cluster-job.txt", 1).get("4242", {})
cvar = keys(f"{work}/cluster-job.txt", 2).get("4242", {})
SD = sum(2 * v for v in csd.values() if not math.isnan(v))
VAR = sum(2 * v for v in cvar.values() if not math.isnan(v))
open(f"{work}/half-4242.txt", "w").write(f"{1.959964 * math.sqrt(SD * SD + VAR)}\n")
# Every kind's key archives have the parts too (issue 39): sd and var > 0
# where a key draws power, and the rows of one key propagated together.
# Without a model the correlated part is the configured idle's (sd 20 %),
# the same for every row: a group's sd is its part of the dynamic power
# times it, so on each node the keys' sd of any kind add up to the same
# (every row but [system] in exactly one key, [none] and [other]
# included). Were a key's rows combined as independent (sd in
# quadrature), a user or command of several jobs would come out lower.
kunc = collections.Counter()
for n in ("n1", "n2"):
    tot = {}
    for kind in ("command", "job", "unit", "container", "user"):
        sd, var = keys(f"{work}/{n}-{kind}.txt", 1), keys(f"{work}/{n}-{kind}.txt", 2)
        w = keys(f"{work}/{n}-{kind}.txt")
        for key, cells in w.items():
            for t, x in cells.items():
                s, v = sd.get(key, {}).get(t, math.nan), var.get(key, {}).get(t, math.nan)
                if key != "[system]" and x > 1:
                    if not (s > 0 and v > 0):
                        fail.append(f"{n}/{kind}/{key} t={t}: {x} W with sd {s}, var {v}")
                    kunc[kind] += 1
                if key != "[system]" and not math.isnan(s):
                    tot.setdefault(t, {}).setdefault(kind, 0.0)
                    tot[t][kind] += s
    same = 0
    for t, by in tot.items():
        if len(by) < 5 or by["job"] <= 0: continue
        for kind, s in by.items():
            if abs(s - by["job"]) > 1e-6 * by["job"] + 1e-9:
                fail.append(f"{n} t={t}: the {kind} keys' sd add up to {s}, the jobs' to {by['job']}")
        same += 1
    if same < 5:
        fail.append(f"{n}: the kinds' sd compared in only {same} cells")
for kind in ("command", "job", "unit", "container", "user"):
    if kunc[kind] < 10:
        fail.append(f"{kind}: only {kunc[kind]} key-cells with power and an interval")
for n in ("n1", "n2"):
    dyn = table(f"{work}/{n}-dynunc.txt")
    if sum(r["sd"] > 0 and r["var"] > 0 for r in dyn.values()) < 5:
        fail.append(f"{n}: dynamic_unc/node.rrd has sd, var > 0 in fewer than 5 cells")
if fail:
    print("FAIL:\n  " + "\n  ".join(fail[:30])); sys.exit(1)
print(f"ok: conservation per kind over {sum(checked.values())} node-kind cells, "
      f"cluster job 4242 = n1 + n2 in {sums} busy cells, 0 W in {zeros} idle ones; "
      f"its interval parts add up too ({unc} cell-sources)")
PY

m=$work/metrics.txt
for s in 'erg_key_energy_joules_total{node="n1",kind="job",key="4242"}' \
         'erg_key_energy_joules_total{node="n2",kind="user",key="0",user="root"}' \
         'erg_job_energy_joules_total{job="4242"}' 'erg_node_dynamic_energy_joules_total{node="n1"}' \
         'erg_node_measured_energy_joules_total{node="n2"}' 'erg_node_idle_energy_joules_total{node="n2"}'; do
  grep -qF "$s " "$m" || { echo "FAIL: /metrics lacks $s"; grep -c . "$m"; exit 1; }
done
# The cluster counter is the nodes' sum, give or take the cells still pending.
python3 - "$m" "$work/half-4242.txt" <<'PY'
import math, sys, re
v = {}
for l in open(sys.argv[1]):
    if l.startswith("erg_"):
        name, val = l.rsplit(" ", 1)
        v[name] = float(val)
job = v['erg_job_energy_joules_total{job="4242"}']
nodes = sum(v[f'erg_key_energy_joules_total{{node="{n}",kind="job",key="4242"}}'] for n in ("n1", "n2"))
assert nodes > 100, f"job 4242 got only {nodes} J"
# /metrics prints 3 decimals: the job counter and the two node counters
# are each rounded, so the sum may differ by 1.5 mJ (seen: 1418.016 vs
# 1418.015).
assert 0.8 * nodes <= job <= nodes + 0.01, (job, nodes)
# Its 95 % interval's half-width beside it (docs/model.md, "Uncertainty"):
# 1.96 sqrt(SD^2 + VAR) of its cluster archive's sd and var over the run,
# whose per-cell values the check above held to the no-model terms (the
# idle a 20 % guess: wider than the energy when the host leaves the jobs
# little CPU, 188 J +- 461 J seen at load average 15-20, so the bound is
# the terms', not the energy's; the accuracy harness judges widths).
half = v.get('erg_job_energy_uncertainty_joules{job="4242"}', 0)
want = float(open(sys.argv[2]).read())
assert 0 < half < math.inf and abs(half - want) <= 0.02 * want + 0.01, \
    f"job 4242: {job} J +- {half}, its archive's terms give +- {want}"
# And each key's beside its counter, of every kind (user 0 on n2: two jobs).
for n, kind, key in (("n1", "job", "4242"), ("n1", "unit", "tool.service"),
                     ("n2", "user", "0")):
    lab = f'node="{n}",kind="{kind}",key="{key}"' + (',user="root"' if kind == "user" else "")
    e = v[f"erg_key_energy_joules_total{{{lab}}}"]
    h = v.get(f"erg_key_energy_uncertainty_joules{{{lab}}}", 0)
    # > 0 only: without a model (the idle a 20 % guess) it may pass e.
    assert e > 0 and 0 < h < math.inf, f"{lab}: {e} J +- {h}"
# Per-key power of the last cell: every kind's keys add up to that cell's
# dynamic power (measured - idle, idle_policy separate).
for n in ("n1", "n2"):
    dyn = v[f'erg_node_measured_watts{{node="{n}"}}'] - v[f'erg_node_idle_watts{{node="{n}"}}']
    for kind in ("command", "job", "unit", "container", "user"):
        pre = f'erg_key_watts{{node="{n}",kind="{kind}",'
        s = sum(x for k, x in v.items() if k.startswith(pre))
        assert any(k.startswith(pre) for k in v), f"no erg_key_watts for {n} {kind}"
        assert abs(s - dyn) <= 0.01 * abs(dyn) + 0.01, (n, kind, s, dyn)
print(f"ok: /metrics job 4242 {job:.0f} J, nodes' job keys {nodes:.0f} J; "
      "per-key watts add up to each node's dynamic power in every kind")
PY
if command -v promtool >/dev/null; then promtool check metrics <"$m"; fi
