# shellcheck shell=bash
# SPDX-License-Identifier: GPL-3.0-or-later
# BMC-shaped meters in the accuracy harness (issue 33, item 6;
# docs/accuracy.md, "BMC-shaped meters"). Sourced by run.sh, which calls
# the functions below at its phases: the same erg-pdusim that serves the
# outlets also serves, over Redfish, what a server's BMC makes of the same
# node power (sampled once a second, 1 W steps, each answer 1-3 s late), and
# a variant whose reading is the trailing 5 s mean. Two more ergd read them
# (driver = redfish), each with its own agents on the same node groups, its
# own idle profiles and fits, so every job is measured three times against
# the one truth. BMC=0 leaves them out.
#
#   bmc      [meter.bmcN] chassis nN: latest 1 s sample, 1 W, 1-3 s late
#   bmc5     [meter.bmcN] chassis nNavg: mean of the last 5 samples, 1 W,
#            1-3 s late; its meters say `average_seconds = 5`
#   bmct     [meter.bmcN] chassis nNt: as bmc, read from a Sensor whose
#            ReadingTime is its sample's on a BMC clock 3600.4 s behind
#            ours (ergd places the readings by it)
# Every sensor samples 1 s + a read time of 5-50 ms after its last sample
# (read=0.005:0.05: a BMC's sensor loop rearms its timer after each read),
# so its phase drifts through the second. BMC_SHAPE overrides the shape
# keys (erg-pdusim --redfish-channel).
# From run.sh: here, work, tag, ERG, FIT_ARGS, fail and lib.sh's helpers.
# shellcheck disable=SC2154
BMC_VARIANTS=${BMC_VARIANTS:-bmc bmc5 bmct}
BMC_SHAPE=${BMC_SHAPE:-quantum=1,refresh=1,delay=1:3,read=0.005:0.05}
BMC_CLOCK=${BMC_CLOCK:--3600.4} # bmct's BMC clock, s off ours
BMC_AVERAGE=${BMC_AVERAGE:-5}
# erg-pdusim arguments: a Redfish tree with chassis nN and nNavg per node.
bmc_sim_args() { # NODES... -> the arguments, one a line
  [ "${BMC:-1}" = 1 ] || return 0
  local n ids=()
  for n in "$@"; do ids+=("$n" "${n}avg" "${n}t:sensor"); done
  python3 "$here/bmc_tree.py" "$work/bmc-tree" "${ids[@]}"
  printf '%s\n' --redfish "$work/bmc-tree" --redfish-http "127.0.0.1:$RP" \
    --redfish-log "$work/bmc-answers.csv"
  for n in "$@"; do
    printf '%s\n' --redfish-channel "/redfish/v1/Chassis/$n=$n,$BMC_SHAPE"
    printf '%s\n' --redfish-channel "/redfish/v1/Chassis/${n}avg=$n,$BMC_SHAPE,average=$BMC_AVERAGE"
    printf '%s\n' --redfish-channel "/redfish/v1/Chassis/${n}t=$n,$BMC_SHAPE,clock=$BMC_CLOCK"
  done
}
bmc_ports() { RP=$(free_port); }

# Starts the BMC ergd and their agents (--scope on the nodes' groups); the
# outlet ergd's erg_dir, ZP and HP are left as they were.
bmc_start() { # STEP WINDOW NODES...
  [ "${BMC:-1}" = 1 ] || return 0
  local step=$1 window=$2 v n k zp=$ZP hp=$HP
  shift 2
  wait_port "$RP" || fail "erg-pdusim did not serve Redfish on $RP"
  for v in $BMC_VARIANTS; do
    erg_instance "$v"
    mkdir -p "$erg_dir/models"
    erg_ergd_conf <<CONF
$(erg_acc_opts "$step" "$window")
$(k=0; for n in "$@"; do k=$((k + 1))
  printf '\n[meter.bmc%d]\ndriver = redfish\nhost = http://127.0.0.1:%s\n' $k "$RP"
  printf 'chassis = /redfish/v1/Chassis/%s%s\n' "$n" "$(case $v in bmc5) echo avg ;; bmct) echo t ;; esac)"
  [ "$v" = bmc5 ] && [ "${BMC_DECLARE_AVERAGE:-1}" = 1 ] &&
    printf 'average_seconds = %s\n' "$BMC_AVERAGE"
  printf '\n[node.%s]\npower = bmc%d\n' "$n" $k; done)
CONF
    erg_start_ergd || fail "ergd ($v) did not start: $(tail -3 "$erg_dir/ergd.log")"
    for n in "$@"; do erg_start_agent "$n" --scope "/$tag-$n" --interval 1 ${SUB:+--sub-interval "$SUB"}; done
  done
  erg_dir=
  ZP=$zp HP=$hp
}

# Idle profiles and fits from each BMC ergd's own journals; waits for the
# models. Failures are the run's (fail).
bmc_fit() { # IDLE_FROM IDLE_TO NODES...
  [ "${BMC:-1}" = 1 ] || return 0
  local from=$1 to=$2 v n d
  shift 2
  for v in $BMC_VARIANTS; do
    d=$work/$v
    for n in "$@"; do
      "$ERG" fit --idle --node "$n" --data-dir "$d/data" --model-dir "$d/models" \
        --from "$from" --to "$to" --json >"$d/idle-$n.json" 2>"$d/idle-$n.err" ||
        fail "erg fit --idle $n ($v): $(cat "$d/idle-$n.err")"
      # shellcheck disable=SC2086 # FIT_ARGS: several options
      "$ERG" fit --data-dir "$d/data" --node "$n" --out "$d/models/$n.json" --json \
        ${FIT_ARGS:-} >"$d/fit-$n.json" 2>"$d/fit-$n.err" ||
        fail "erg fit $n ($v): $(tail -3 "$d/fit-$n.err")"
    done
  done
  for v in $BMC_VARIANTS; do
    erg_wait_log "$work/$v/ergd.log" "model loaded" $# 25 || fail "ergd ($v) did not load the models"
  done
}

# After erg_stop: each BMC ergd's job archives as report.py reads them, the
# truth and the samplers' files linked in, its lag estimates kept.
bmc_fetch() { # T_START T_END STEP JOBS
  [ "${BMC:-1}" = 1 ] || return 0
  local t0=$1 t1=$2 step=$3 jobs=$4 v j name jn id f
  for v in $BMC_VARIANTS; do
    ln -sf "$work/truth.csv" "$work/$v/truth.csv"
    for f in "$work"/cpu-*.csv; do ln -sf "$f" "$work/$v/"; done
    # each node's dynamic energy and its interval (coverage.py)
    for n in $(printf '%s\n' $jobs | cut -d: -f2 | sort -u); do
      rrdtool fetch "$work/$v/data/nodes/$n/node.rrd" AVERAGE -r "$step" -s $((t0 - step)) -e "$t1" \
        >"$work/$v/node-$n.txt"
      f=$(key_rrd "$work/$v/data/nodes/$n/dynamic_unc" node)
      [ -z "$f" ] || rrdtool fetch "$f" AVERAGE -r "$step" -s $((t0 - step)) -e "$t1" >"$work/$v/node-$n.dyn.txt"
    done
    for j in $jobs; do
      IFS=: read -r name jn id <<<"$j"
      f=$(key_rrd "$work/$v/data/nodes/$jn/job" "$id")
      [ -n "$f" ] || fail "ergd ($v) has no archive of job $id on $jn"
      rrdtool fetch "$f" AVERAGE -r "$step" -s $((t0 - step)) -e "$t1" >"$work/$v/$jn-$name.txt"
    done
  done
}

# report.py on each BMC ergd, then the table of the three (bmc_report.py).
# Its exit status: the worst. Each variant's per-job intervals (coverage.py,
# labelled with the variant for COVERAGE_OUT) are reported, not judged: the
# 95 % intervals' calibration is measured over seeds (docs/accuracy.md).
bmc_report() { # report.py's arguments after WORK
  [ "${BMC:-1}" = 1 ] || return 0
  local v rc=0
  for v in $BMC_VARIANTS; do
    echo "--- $v"
    python3 "$here/report.py" "$work/$v" "$@" >"$work/$v/report.txt" || rc=1
    tail -2 "$work/$v/report.txt"
    COVERAGE_METER=$v python3 "$here/coverage.py" "$work/$v" "$@" >"$work/$v/coverage.txt" 2>&1 || true
    grep '^per-job' "$work/$v/coverage.txt" || tail -1 "$work/$v/coverage.txt"
  done
  # shellcheck disable=SC2086 # one argument per variant
  python3 "$here/bmc_report.py" "$work" $BMC_VARIANTS || rc=1
  return $rc
}
