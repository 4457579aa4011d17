#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Accuracy harness (docs/accuracy.md). Two virtual nodes on this machine,
# each a cgroup2 group (erg-agent --scope; erg-pdusim --node NAME=CGROUP):
# erg-pdusim simulates per node a meter whose power is a NON-LINEAR function
# of the group's CPU load (P = idle + slope*util^1.4 + noise, quantised,
# lagged); ergd + one erg-agent per node measure it. A training phase of
# varying load feeds the journals, `erg fit` fits each node's model, ergd
# picks them up, then an evaluation phase runs two identical jobs (jobA,
# jobB) and a different one (jobC) on n1, two others (jobD, jobE) on n2,
# each in a Slurm-style job cgroup (NODE/job_<id>) so erg names them by job.
# CPU load is stress-ng (--cpu 1 --cpu-load P, one run per schedule step).
# The meters also charge a linear disk cost (W per MB/s of the group's block
# I/O): n2 trains with a direct-I/O writer up to DISK_TRAIN_MAX MB/s, and its
# jobE writes 1.2-1.5 times that beside jobD's CPU load, so attribution is
# checked beyond the training range (issue 14).
# Reports held-out MAPE (total, dynamic), per-job energy (erg's job
# archives) vs the simulator's truth and the identical-job share difference.
#
#   tests/accuracy/run.sh [--short] [BUILD_DIR | PDUSIM ERGD AGENT ERG]
#
# BUILD_DIR defaults to build-model; --short is the ctest variant (~2 min,
# bounds looser than the goals). KEEP=1 keeps the work directory;
# FIT_ARGS="--linear" (or other `erg fit` options) changes the fit; SUB=S
# runs the agents with --sub-interval S (their busy time in slices; unset:
# the agent's default, 0.1 s; SUB=0: none, as the goals were first
# measured; docs/accuracy.md "Slices by default"). The outlets' ergd polls
# every 0.25 s: erg-pdusim's power follows the mean load of each 0.5 s
# update, and ergd offers windows of the updates' load to its tails only
# where it sees the reading held over polls (docs/model.md "The tails'
# window"); polled every 0.5 s it changed at every poll. UPDATE=S:
# erg-pdusim's --update (default 0.5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ACC_BUILD=build-model . "$here/args.sh" "$@"
. "$here/bmc.sh" # BMC-shaped meters beside the outlets (BMC=0: none)
# The short run leaves them out unless BMC=1: a BMC's lag takes ~30 s of its
# 90 s training to find, too few cells are left for a fit (seen: 17 and 6
# held out, 18 needed), and two more ergd with four agents load the host
# the CPU shares are measured on. The full run has them.
[ $mode = short ] && BMC=${BMC:-0}
erg_need rrdtool ss python3 stress-ng

# Simulator truth model (see docs/accuracy.md).
IDLE=100 SLOPE=150 EXPONENT=1.4 NOISE=1 QUANTUM=0.5 LAG=2
DISK_W=0.5 DISK_TRAIN_MAX=40 # W per MB/s of block I/O; n2's largest training rate
if [ $mode = short ]; then
  # 18 segments: the cells before ergd's first confident lag estimate
  # (~30 s of paired data) are flagged 16 and not fitted, and the fit needs
  # 2 x (features + 1) training cells beside the held-out quarter.
  STEP=2 SEG=5 TRAIN_SEGS=18 WINDOW=30 IDLE_S=12
  EVAL="0.3:8,0.8:8,0.5:8" EVALC="0.6:12,0.2:12" EVALD="0.9:12,0.4:12" EVALE="0.2:24"
  EVALE_DISK="48:12,60:12"
else
  # IDLE_S: a BMC's idle profile is the mean of its readings in the quiet
  # window, one whole watt every 1-3 s (~1 W of noise each): 160 s gives
  # ~80 of them, +-0.12 W (40 s gave +-0.2-0.26 W; docs/accuracy.md).
  STEP=5 SEG=15 TRAIN_SEGS=24 WINDOW=120 IDLE_S=160
  EVAL="0.3:40,0.8:40,0.5:40,0.9:40" EVALC="0.6:80,0.2:80" EVALD="0.9:60,0.4:100"
  EVALE="0.2:80,0.7:80" EVALE_DISK="48:80,60:80"
fi
# erg-pdusim reads /sys/fs/cgroup<CGROUP>/cpu.stat: the cgroup2 path from
# there (SIMPREFIX).
erg_cgroup2
"$AGENT" --help 2>&1 | grep -q -- --scope || { echo "SKIP: erg-agent has no --scope"; exit 77; }

erg_setup acc
tag=erg-acc-$$
# Evaluation jobs: name, node, Slurm job id (its cgroup is NODE/job_<id>).
JOBS="jobA:n1:1001 jobB:n1:1002 jobC:n1:1003 jobD:n2:2001 jobE:n2:2002"
# The groups, job groups before their node's: removed on exit.
groups=$(for j in $JOBS; do IFS=: read -r _ n id <<<"$j"; echo "$tag-$n/job_$id"; done)
groups="$groups $tag-n1 $tag-n2"
# shellcheck disable=SC2034 # run by lib.sh's erg_cleanup
ERG_CLEANUP='erg_cg_remove $groups'
fail() { echo "FAIL: $*"; tail -20 "$work/ergd.log"; exit 1; }
for n in n1 n2; do
  mkdir "$CG2/$tag-$n" 2>/dev/null || { echo "SKIP: cannot create cgroup $CG2/$tag-$n"; exit 77; }
done
for j in $JOBS; do
  IFS=: read -r name n id <<<"$j"
  mkdir "$CG2/$tag-$n/job_$id"
done
# Runs a block I/O schedule "MBPS:SECONDS,..." (tests/accuracy/diskload.py,
# direct I/O to a file of the work directory) in cgroup directory $1.
dload() {
  sh -c 'echo $$ > "$0/cgroup.procs" || exit 1
    exec python3 "$1" "$2" "$3"' "$1" "$here/diskload.py" "$work/disk-$(basename "$1").dat" "$2"
}
jobdir() { # name -> the job's cgroup directory
  local j name n id
  for j in $JOBS; do
    IFS=: read -r name n id <<<"$j"
    [ "$name" = "$1" ] && echo "$CG2/$tag-$n/job_$id"
  done
}

erg_ports
bmc_ports
erg_ergd_conf <<CONF
$(erg_acc_opts $STEP $WINDOW 0.25)

$(erg_sim_meter)

[node.n1]
power = sim:1

[node.n2]
power = sim:2
CONF
mkdir -p "$work/models"

mapfile -t bmc_args < <(bmc_sim_args n1 n2)
erg_start_pdusim --node n1=$SIMPREFIX/$tag-n1 --node n2=$SIMPREFIX/$tag-n2 \
  --idle $IDLE --slope $SLOPE --exponent $EXPONENT --noise $NOISE --quantum $QUANTUM \
  --lag $LAG --update ${UPDATE:-0.5} --seed ${SEED:-1} --disk-watts-per-mbps $DISK_W --truth "$work/truth.csv" \
  "${bmc_args[@]}"
erg_start_ergd
bmc_start $STEP $WINDOW n1 n2
for n in n1 n2; do
  erg_start_agent $n --scope /$tag-$n --interval 1 ${SUB:+--sub-interval "$SUB"}
  # Per-job CPU time and the node's busy time, sampled independently of erg.
  python3 "$here/sampler.py" "$work/cpu-$n.csv" "$CG2/$tag-$n" \
    $(for k in jobA jobB jobC jobD jobE; do echo "$k=$(jobdir $k)"; done) &
  pids+=($!)
done

# Training: two processes per node at pseudo-random loads, SEG s per level.
# The fit holds out the journal's last 25 %. In the short run (18 segments)
# that block may hold the only high-load segments, and a held-out MAPE then
# measures extrapolation beyond anything trained (seen: 14-16 % on n1). So
# there the last third of a node's segments repeats earlier busy ones (the
# same for both its processes): held-out loads are loads it was trained on.
schedules() { # seed1 seed2 node_seed -> two lines "L:SEG,..." of TRAIN_SEGS levels
  python3 - "$@" $TRAIN_SEGS $SEG $mode <<'PY'
import random, sys
s1, s2, ns, n, seg, mode = sys.argv[1:7]
n = int(n)
def levels(seed):
    r = random.Random(int(seed))
    return [r.choice([0, 0, 0.2, 0.4, 0.6, 0.8, 1]) for _ in range(n)]
lv = [levels(s1), levels(s2)]
if mode == "short":
    keep = n - n // 3
    busy = [i for i in range(keep) if lv[0][i] + lv[1][i] > 0] or list(range(keep))
    rn = random.Random(int(ns))
    pick = [rn.choice(busy) for _ in range(n - keep)]
    lv = [l[:keep] + [l[i] for i in pick] for l in lv]
for l in lv:
    print(",".join(f"{x:.1f}:{seg}" for x in l))
PY
}
disk_schedule() { # seed -> "MBPS:SEG,..." of TRAIN_SEGS rates up to DISK_TRAIN_MAX
  python3 - "$1" $TRAIN_SEGS $SEG $DISK_TRAIN_MAX <<'PY'
import random, sys
seed, n, seg, top = (int(x) for x in sys.argv[1:5])
r = random.Random(seed)
lv = [r.choice([0, 0, top / 4, top / 2, 3 * top / 4, top]) for _ in range(n)]
lv[1] = top  # the training maximum is DISK_TRAIN_MAX, whatever the draw
print(",".join(f"{x:g}:{seg}" for x in lv))
PY
}
# stress-ng's first start reads its binary and libraries from disk; later
# starts read nothing (the agent charges block reads to the process that
# issues them), so the fit sees no disk activity that is only start-up.
stress-ng --cpu 1 --cpu-load 10 --timeout 1s -q || true
# Idle profile: the nodes' cgroups stay empty for IDLE_S seconds first;
# `erg fit --idle` records it from the journal (docs/model.md, "Idle
# profile") and the fit takes idle power from it.
idle_from=$(date +%s)
sleep $IDLE_S
idle_to=$(date +%s)
echo "training $((SEG * TRAIN_SEGS)) s ..."
tp=()
# The training schedules' seeds follow SEED (SEED=1, the default and the
# ctest's: 1 2 11 / 3 4 12 / 21 as always), so runs of several seeds fit
# different models, not only different meter noise (docs/accuracy.md).
so=$(( 100 * (${SEED:-1} - 1) ))
for n in n1 n2; do
  [ $n = n1 ] && set -- $((1 + so)) $((2 + so)) $((11 + so)) || set -- $((3 + so)) $((4 + so)) $((12 + so))
  { read -r sa; read -r sb; } < <(schedules "$@")
  erg_load_schedule "$CG2/$tag-$n" "$sa" & tp+=($!)
  erg_load_schedule "$CG2/$tag-$n" "$sb" & tp+=($!)
done
dload "$CG2/$tag-n2" "$(disk_schedule $((21 + so)))" & tp+=($!)
wait "${tp[@]}"
sleep $((2 * STEP + LAG))
for n in n1 n2; do
  "$ERG" fit --idle --node $n --data-dir "$work/data" --model-dir "$work/models" \
    --from $idle_from --to $((idle_to - STEP)) --json >"$work/idle-$n.json" \
    2>"$work/idle-$n.err" || { cat "$work/idle-$n.err"; fail "erg fit --idle $n"; }
  "$ERG" fit --data-dir "$work/data" --node $n --out "$work/models/$n.json" --json \
    ${FIT_ARGS:-} >"$work/fit-$n.json" 2>"$work/fit-$n.err" ||
    { cat "$work/fit-$n.err"; fail "erg fit $n"; }
done
erg_wait_log "$work/ergd.log" "model loaded" 2 25 || fail "ergd did not load both models"
bmc_fit $idle_from $((idle_to - STEP)) n1 n2

# Evaluation window: whole cells only.
now=$(date +%s); t_start=$(( (now / STEP + 1) * STEP )); sleep $((t_start - now))
echo "evaluation from $t_start ..."
ep=()
erg_load_schedule "$(jobdir jobA)" "$EVAL" & ep+=($!)
erg_load_schedule "$(jobdir jobB)" "$EVAL" & ep+=($!)
erg_load_schedule "$(jobdir jobC)" "$EVALC" & ep+=($!)
erg_load_schedule "$(jobdir jobD)" "$EVALD" & ep+=($!)
erg_load_schedule "$(jobdir jobE)" "$EVALE" & ep+=($!)
dload "$(jobdir jobE)" "$EVALE_DISK" & ep+=($!)
wait "${ep[@]}"
# The window holds the whole jobs, as `erg jobs` reports them: from the cell
# before their start to the cell after the one they ended in (their
# schedules end a fraction of a second past t_start + their length). A
# window that cut running jobs would add ergd's sub-second alignment error
# at the cut (a lag fraction off by 0.05 s: 0.05 s x the jobs' power), an
# error of the window, not of a job's energy, where it cancels
# (docs/accuracy.md, "Per-job intervals"). Cells before t_start: idle.
now=$(date +%s); t_end=$(( (now / STEP + 2) * STEP )); t_start=$((t_start - STEP))
sleep $(( t_end - now + 2 * STEP + LAG + 10 ))  # cells settle (+ lag compensation)
curl -sf "http://127.0.0.1:$HP/metrics" >"$work/metrics.txt" || fail "GET /metrics"
erg_stop

for n in n1 n2; do
  dir="$work/data/nodes/$n"
  rrdtool fetch "$dir/node.rrd" AVERAGE -r $STEP -s $((t_start - STEP)) -e $t_end >"$work/node-$n.txt"
  # The node's dynamic energy's 95 % interval: dynamic_unc/node.rrd's sd, var (coverage.py).
  f=$(key_rrd "$dir/dynamic_unc" node)
  [ -n "$f" ] && rrdtool fetch "$f" AVERAGE -r $STEP -s $((t_start - STEP)) -e $t_end >"$work/node-$n.dyn.txt"
  # A job's energy from its job archive: the cgroup path -> job id path.
  for j in $JOBS; do
    IFS=: read -r name jn id <<<"$j"
    [ "$jn" = $n ] || continue
    f=$(key_rrd "$dir/job" $id)
    # watts, and its 95 % interval's parts sd and var (coverage.py)
    [ -n "$f" ] && rrdtool fetch "$f" AVERAGE -r $STEP -s $((t_start - STEP)) -e $t_end >"$work/$n-$name.txt"
  done
done
bmc_fetch $t_start $t_end $STEP "$JOBS"
cov=0 # per-job 95 % intervals (coverage.py), judged after the reports
python3 "$here/coverage.py" "$work" $mode $t_start $t_end $STEP $IDLE $SLOPE $EXPONENT $LAG $DISK_W || cov=1
rc=0
python3 "$here/report.py" "$work" $mode $t_start $t_end $STEP $IDLE $SLOPE $EXPONENT $LAG $DISK_W |
  tee "$work/report.txt" || rc=1
bmc_report $mode $t_start $t_end $STEP $IDLE $SLOPE $EXPONENT $LAG $DISK_W || rc=1
[ $cov = 0 ] || fail "per-job 95 % intervals (coverage.py)"
[ $rc = 0 ] || exit 1
# jobE wrote past n2's training maximum: ergd counts such cells and says
# so once (docs/model.md, "Beyond the training range").
if command -v promtool >/dev/null; then
  promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics"
fi
beyond=$(awk -F'} ' '/^erg_cells_out_of_training_range_total\{node="n2"/ { print $2 }' "$work/metrics.txt")
echo "cells beyond the training range: n2 ${beyond:-none}; ergd said:"
grep "n2: .* training maximum" "$work/ergd.log" || true
[ "${beyond:-0}" -gt 0 ] || fail "no n2 cell counted in erg_cells_out_of_training_range_total"
[ "$(grep -c "node n2: .* training maximum" "$work/ergd.log")" = 1 ] ||
  fail "ergd did not log the first n2 cell beyond the training range exactly once"

