#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Device check for issue 37 (not a ctest test): what one NVML sampling pass
# of erg-agent costs per GPU and per call (tests/gpu/nvml_cost.c), on a
# host with an NVIDIA GPU and its driver; gcc, libc and libdl only. Two
# runs of PASSES passes 1 s apart, each printed as one JSON line: "idle"
# (whatever runs on the GPUs now), then "busy" with gpu_load.c's FMA loop
# on device 0 (CUDA driver API through dlopen; skipped without libcuda).
# Compare cpu_us per GPU between GPUs and between the runs, and
# nvmlDeviceGetProcessUtilization's share on an idle GPU.
#
#   tests/gpu/nvml_cost.sh [PASSES=20]          (about 2 x PASSES s + 30 s)
#   tests/gpu/nvml_cost.sh PASSES --standin LIB  (no GPU: the NVML stand-in)
# Exit 0; 77: no NVIDIA GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
passes=${1:-20}
lib=libnvidia-ml.so.1
tmp=$(mktemp -d)
load=
trap '[ -n "$load" ] && kill $load 2>/dev/null; rm -rf "$tmp"' EXIT
if [ "${2:-}" = --standin ]; then
  lib=$3
  printf 'period_ms 100\ngpu 0 uuid=GPU-a name=standin\ngpu 1 uuid=GPU-b name=standin\n' >"$tmp/script"
  printf 'at 0 gpu=0 power_w=300 util=80 proc=%s:80:10:100\nat 0 gpu=1 power_w=60 util=0\n' $$ >>"$tmp/script"
  export ERG_NVML_STANDIN_SCRIPT=$tmp/script
fi
gcc -O2 -std=gnu11 -Wall -Wextra -I "$root/node-agent" "$here/nvml_cost.c" -ldl -o "$tmp/nvml_cost"
echo "# $(date -u '+%F %T UTC'), $(uname -r), $(nproc) CPUs, driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || echo '?')"
nvidia-smi -L 2>/dev/null | sed 's/^/# /' || true
rc=0
printf '{"run":"idle","result":'; "$tmp/nvml_cost" "$passes" 1 "$lib" || rc=$?
[ $rc = 2 ] && { echo "SKIP: no NVIDIA GPU or driver" >&2; exit 77; }
printf '}\n'
[ -n "${ERG_NVML_STANDIN_SCRIPT:-}" ] && exit 0
if gcc -O2 -std=gnu11 -Wall -Wextra "$here/gpu_load.c" -ldl -o "$tmp/gpu_load" 2>/dev/null; then
  "$tmp/gpu_load" load $((passes + 40)) "$tmp/ready" 2>"$tmp/load.err" & load=$!
  for _ in $(seq 300); do [ -e "$tmp/ready" ] || ! kill -0 $load 2>/dev/null && break; sleep 0.1; done
  if [ -e "$tmp/ready" ]; then
    sleep 2
    printf '{"run":"busy (gpu_load on device 0)","result":'; "$tmp/nvml_cost" "$passes" 1 "$lib"; printf '}\n'
  else
    echo "# gpu_load did not start: $(head -c 200 "$tmp/load.err")"
  fi
fi
