#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Device check of erg's GPU sampling, for a host with an NVIDIA GPU and its
# driver (libnvidia-ml.so.1); it needs nothing else of erg's dependencies:
# gcc builds gpu_check from tests/gpu/gpu_check.c and node-agent/gpu*.c
# (libc and libdl only). With python3 and PyTorch (CUDA) it runs a
# matrix-product loop on cuda:0 beside an idle process that only holds a
# CUDA context, samples the GPUs every 0.1 s for --seconds, and prints one
# JSON object: the GPUs seen, the load's and the idle process's SM shares
# (goal: load >= 0.90), NVML's energy counter against integrated power
# readings (goal: within 2 %) and the cost of a sampling pass. Without
# PyTorch the same two processes come from gpu_load.c (CUDA driver API via
# dlopen, a PTX kernel: no CUDA toolkit needed); without libcuda either it
# says so and checks the GPUs and energy only.
#
#   tests/gpu/device_check.sh [--seconds N] [--no-torch]   N: 1..150, default 30
#   tests/gpu/device_check.sh --standin LIB [--seconds N]
#
# --no-torch: use gpu_load.c even where PyTorch is present.
# --standin: no GPU here; LIB is the NVML stand-in (build/tests/gpu/
# libnvml_standin.so) serving a scripted GPU to two `sleep` processes in
# place of the loads: checks that this script and gpu_check build and run.
# Finishes within 5 minutes: at most 90 s for PyTorch to start, N s of
# sampling. Exit 0: goals met; 1: a goal missed; 77: no NVIDIA GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=30
standin=
no_torch=
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:-}; shift 2 ;;
    --no-torch) no_torch=1; shift ;;
    --standin) standin=${2:-}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
case $seconds in ''|*[!0-9]*) echo "device_check: --seconds: 1..150" >&2; exit 2 ;; esac
[ "$seconds" -ge 1 ] && [ "$seconds" -le 150 ] || { echo "device_check: --seconds: 1..150" >&2; exit 2; }

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

gcc -O2 -std=gnu11 -Wall -Wextra -I "$root/node-agent" "$here/gpu_check.c" \
  "$root/node-agent/gpu.c" "$root/node-agent/gpu_nvml.c" "$root/node-agent/gpu_rocm.c" -ldl \
  -o "$tmp/gpu_check"

json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1" 2>/dev/null ||
  printf '"%s"' "${1//\"/\'}"; }
load_pid= idle_pid= load_note=
if [ -n "$standin" ]; then
  # Stand-ins for the two GPU processes, and a GPU whose power steps.
  sleep $((seconds + 30)) & load_pid=$!; pids+=("$load_pid")
  sleep $((seconds + 30)) & idle_pid=$!; pids+=("$idle_pid")
  cat >"$tmp/script" <<EOF
period_ms 100
gpu 0 uuid=GPU-standin-check name=erg-NVML-stand-in
at 0 gpu=0 power_w=120 util=0 proc=$idle_pid:0:0:512
at 0.5 gpu=0 power_w=400 util=100 memutil=40 proc=$load_pid:97:40:20480 proc=$idle_pid:0:0:512
EOF
  export ERG_NVML_STANDIN_SCRIPT=$tmp/script ERG_NVML_LIBRARY=$standin
  load_note="NVML stand-in $standin: two sleep processes in place of the loads (no GPU here)"
elif [ -z "$no_torch" ] && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
     2>/dev/null; then
  run_s=$((seconds + 100))
  python3 -c '
import sys, time, torch
x = torch.ones(1024, device="cuda"); torch.cuda.synchronize()
open(sys.argv[1], "w").close(); time.sleep(float(sys.argv[2]))' "$tmp/idle.ready" "$run_s" &
  idle_pid=$!; pids+=("$idle_pid")
  python3 -c '
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda"); b = torch.randn(8192, 8192, device="cuda")
(a @ b).sum().item(); open(sys.argv[1], "w").close()
end = time.time() + float(sys.argv[2])
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()' "$tmp/load.ready" "$run_s" &
  load_pid=$!; pids+=("$load_pid")
  for _ in $(seq 900); do
    [ -e "$tmp/idle.ready" ] && [ -e "$tmp/load.ready" ] && break
    kill -0 "$load_pid" 2>/dev/null && kill -0 "$idle_pid" 2>/dev/null ||
      { echo "device_check: a PyTorch process died before it was ready" >&2; break; }
    sleep 0.1
  done
  if [ -e "$tmp/idle.ready" ] && [ -e "$tmp/load.ready" ]; then
    load_note="PyTorch matmul loop (8192x8192 fp32) on cuda:0, pid $load_pid; idle CUDA context, pid $idle_pid"
    sleep 2 # past the start-up burst
  else
    load_note="PyTorch did not start its loads within 90 s: GPUs and energy only"
    load_pid= idle_pid=
  fi
elif gcc -O2 -std=gnu11 -Wall -Wextra "$here/gpu_load.c" -ldl -o "$tmp/gpu_load" &&
     "$tmp/gpu_load" idle 1 "$tmp/probe" 2>"$tmp/cuda.err"; then
  # No PyTorch: the same two processes from the CUDA driver API (gpu_load.c).
  run_s=$((seconds + 100))
  "$tmp/gpu_load" idle "$run_s" "$tmp/idle.ready" & idle_pid=$!; pids+=("$idle_pid")
  "$tmp/gpu_load" load "$run_s" "$tmp/load.ready" & load_pid=$!; pids+=("$load_pid")
  for _ in $(seq 300); do
    [ -e "$tmp/idle.ready" ] && [ -e "$tmp/load.ready" ] && break
    sleep 0.1
  done
  if [ -e "$tmp/idle.ready" ] && [ -e "$tmp/load.ready" ]; then
    load_note="gpu_load (CUDA driver API, PTX FMA loop) on device 0, pid $load_pid; idle CUDA context, pid $idle_pid"
    sleep 2
  else
    load_note="gpu_load did not start within 30 s: GPUs and energy only"
    load_pid= idle_pid=
  fi
else
  load_note="no load: neither PyTorch (CUDA) nor libcuda.so.1 usable ($(head -c 200 "$tmp/cuda.err" 2>/dev/null)); GPUs and energy only"
fi

args=(--seconds "$seconds" --interval 0.1)
[ -n "$load_pid" ] && args+=(--load-pid "$load_pid" --idle-pid "$idle_pid")
rc=0
result=$(timeout $((seconds + 60)) "$tmp/gpu_check" "${args[@]}") || rc=$?
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
printf '{"check":"erg device_check (tests/gpu)","load":%s,"driver":%s,"result":%s}\n' \
  "$(json_str "$load_note")" "$(json_str "${driver:-unknown}")" "${result:-null}"
case $rc in
  0) exit 0 ;;
  2) echo "SKIP: no NVIDIA GPU or driver (see result.error)" >&2; exit 77 ;;
  *) exit 1 ;;
esac
