# shellcheck shell=bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The arguments of the accuracy harnesses (run.sh, shared.sh,
# light_load.sh), sourced after `here` (the harness's folder) is set:
#   [--short] [BUILD_DIR | PDUSIM ERGD AGENT ERG]
# sets mode (short or full) and PDUSIM, ERGD, AGENT, ERG (from BUILD_DIR,
# default ACC_BUILD below the source tree, "build" unless set), then
# sources the shell test library (tests/integration/lib.sh).
mode=full
[ "${1:-}" = --short ] && { mode=short; shift; }
if [ $# -ge 4 ]; then
  PDUSIM=$1 ERGD=$2 AGENT=$3 ERG=$4
else
  b=$(cd "${1:-$here/../../${ACC_BUILD:-build}}" && pwd)
  PDUSIM=$b/pdusim/erg-pdusim ERGD=$b/collector/ergd AGENT=$b/node-agent/erg-agent
  ERG=$b/cli/erg
fi
. "$here/../integration/lib.sh"
