#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg check-config on a generated ergd config (not a ctest test): NODES
# [node.NAME] sections, each fed by FEEDS outlets of its own ("pdu-K:outlet:N",
# 64 outlets per [pdu.NAME]), timed over RUNS runs, best kept. It times the
# whole load as ergd does it: INI parsing and its duplicate checks, node
# lookups, power expressions and their cross-checks (collector/config_power.c).
# usage: config_bench.sh [--port-base PORT] BUILD_DIR [NODES=5000] [FEEDS=1] [RUNS=5]
# Ports: none; --port-base / ERG_BENCH_PORT_BASE are accepted and unused.
set -euo pipefail
if [ "${1:-}" = --port-base ]; then shift 2; fi
B=$1; NODES=${2:-5000}; FEEDS=${3:-1}; RUNS=${4:-5}
work=$(mktemp -d /tmp/erg-cfgbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
awk -v n="$NODES" -v f="$FEEDS" 'BEGIN {
  print "[collector]\ndata_dir = /nonexistent/erg-cfgbench\n"
  for (s = 0; s < int((n * f + 63) / 64); s++)
    printf "[pdu.pdu-%d]\nhost = 10.0.%d.%d\n\n", s, int(s / 250), s % 250 + 1
  for (i = k = 0; i < n; i++) {
    p = ""
    for (j = 0; j < f; j++) {
      p = p (j ? " + " : "") sprintf("pdu-%d:outlet:%d", int(k / 64), k % 64 + 1)
      k++
    }
    printf "[node.cn%05d]\npower = %s\n\n", i, p
  }
}' >"$work/ergd.conf"
"$B/cli/erg" check-config "$work/ergd.conf"
# Best wall time, and best CPU (user + sys: less moved by other load).
TIMEFORMAT='%R %U %S'
best=; cpu=
for _ in $(seq 1 "$RUNS"); do
  read -r r u s < <({ time "$B/cli/erg" check-config "$work/ergd.conf" >/dev/null; } 2>&1)
  c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
  best=$(awk -v a="${best:-$r}" -v b="$r" 'BEGIN { print (b < a ? b : a) }')
  cpu=$(awk -v a="${cpu:-$c}" -v b="$c" 'BEGIN { print (b < a ? b : a) }')
done
echo "$NODES nodes x $FEEDS feeds: check-config $best s wall, $cpu s CPU (best of $RUNS)"
