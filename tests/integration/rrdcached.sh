#!/usr/bin/env bash
# ergd writes through rrdcached when its config says `rrdcached = ADDRESS`
# (no RRDCACHED_ADDRESS in the environment): a real rrdcached holding
# updates for an hour (-w 3600) has the node's recent cells while the file
# on disk has not, and `rrdtool flushcached` then brings the file level.
# usage: rrdcached.sh PDUSIM ERGD
set -euo pipefail
PDUSIM=$1 ERGD=$2
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
rrdtool flushcached --daemon "$sock" "$f"
flushed=$(rrdtool last "$f")
now=$(date +%s)
echo "last update: on disk $disk, through the daemon $cached, after flush $flushed (now $now)"
# Created, then every update held by the daemon: the file stays at its start.
[ "$cached" -ge $((now - 8)) ] || { echo "FAIL: daemon's last update is old"; exit 1; }
[ "$disk" -lt $((cached - 4)) ] || { echo "FAIL: updates reached the file directly"; exit 1; }
[ "$flushed" = "$cached" ] || { echo "FAIL: flush did not bring the file level"; exit 1; }
echo ok
