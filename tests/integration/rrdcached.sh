#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# ergd writes through rrdcached when its config says `rrdcached = ADDRESS`
# (no RRDCACHED_ADDRESS in the environment): a real rrdcached holding
# updates for an hour (-w 3600) has the node's recent cells while the file
# on disk has not, and `rrdtool flushcached` then brings the file level.
# `erg report --config` reads through the same daemon: it flushes the files
# it reads, so it reports the recent cells and leaves the file level.
# usage: rrdcached.sh PDUSIM ERGD ERG
set -euo pipefail
PDUSIM=$1 ERGD=$2 ERG=$3
. "$(dirname "$0")/lib.sh"
for tool in rrdcached rrdtool ss python3; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
unset RRDCACHED_ADDRESS
erg_setup rrdc
erg_ports
sock="unix:$work/rrdcached.sock"
mkdir -p "$work/data"
rrdcached -g -l "$sock" -b "$work/data" -B -w 3600 -f 7200 -p "$work/rrdcached.pid" \
  >"$work/rrdcached.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$work/rrdcached.sock" ] && break; sleep 0.1; done
erg_ergd_conf <<CONF
rrdcached = $sock
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
lag_max_seconds = 0

$(erg_sim_meter)

[node.rc]
power = sim:1
idle_watts = 50
CONF
erg_start_pdusim --node rc --idle 50 --slope 0 --update 0.5
erg_start_ergd
sleep 12
f="$work/data/nodes/rc/node.rrd"
[ -f "$f" ] || { echo "FAIL: $f not created"; cat "$work/ergd.log"; exit 1; }
disk=$(rrdtool last "$f")
cached=$(rrdtool last --daemon "$sock" "$f")
# erg report with ergd's config only (no RRDCACHED_ADDRESS): the node's
# idle 50 W over the last 8 s, which only the daemon has.
from=$((cached - 8))
"$ERG" report --config "$work/ergd.conf" --from $from --to $cached --format json \
  >"$work/report.json" 2>"$work/report.err" || { cat "$work/report.err"; exit 1; }
flushed=$(rrdtool last "$f")
now=$(date +%s)
echo "last update: on disk $disk, through the daemon $cached, after erg report $flushed (now $now)"
python3 - "$work/report.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
r = [r for r in rows if r["node"] == "rc"]
assert r and r[0]["mean_w"] is not None and abs(r[0]["mean_w"] - 50) < 2, rows
print("erg report through the daemon: rc mean %.1f W" % r[0]["mean_w"])
PY
# Created, then every update held by the daemon: the file stays at its start.
[ "$cached" -ge $((now - 8)) ] || { echo "FAIL: daemon's last update is old"; exit 1; }
[ "$disk" -lt $((cached - 4)) ] || { echo "FAIL: updates reached the file directly"; exit 1; }
# ergd may hand the daemon another cell between the two reads (step 2 s):
# the file must have reached at least what the daemon had before the report.
[ "$flushed" -ge "$cached" ] || { echo "FAIL: erg report did not flush the file through the daemon"; exit 1; }
echo ok
