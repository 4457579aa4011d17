#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-agent with AMD GPUs (ROCm SMI). No GPU exists where this runs, so the
# ROCm SMI stand-in (rocm_standin.c) serves two scripted GPUs, used by two
# `sleep` processes of this test (idle on the CPU, so only their GPU use
# brings them into the samples):
#  a. gpu = rocm: the samples carry each GPU's energy and power, and on
#     those processes' entries their shares (GPU 0 by CU occupancy, GPU 1
#     without it by VRAM) and memory;
#  b. gpu = auto with the NVML stand-in too: NVIDIA's GPU, then AMD's;
#  c. gpu = rocm without the library refuses to start, as does gpu = amd;
#  d. the AMD GPUs lost mid-run: one log line, the hello again without the
#     GPU features, the samples go on.
set -euo pipefail
AGENT=$1
ROCM=$2
NVML=$3
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
dir=$(mktemp -d)
. "$(dirname "$0")/agent_gpu_lib.sh"
sleep 60 & gpu_a=$!
sleep 60 & gpu_b=$!
trap 'kill $gpu_a $gpu_b 2>/dev/null || true; rm -rf "$dir"' EXIT

cat >"$dir/rocm" <<EOF
gpu 0 unique_id=a1 name=Instinct-A
gpu 1 name=Instinct-B energy=0 procutil=0
at 0 gpu=0 power_w=250 util=80 memutil=30 proc=$gpu_a:60:0:1024 proc=$gpu_b:20:0:512
at 0 gpu=1 power_w=70 util=40 proc=$gpu_a:0:0:256 proc=$gpu_b:0:0:768
EOF
cat >"$dir/nvml" <<EOF
gpu 0 uuid=GPU-erg-test-nv name=StandIn-NV
at 0 gpu=0 power_w=150 util=50 proc=$gpu_a:40:5:128
EOF
ini() { printf '[agent]\ngpu = %s\nnvml_library = %s\nrocm_smi_library = %s\n' "$1" "$2" "$3" \
  >"$dir/agent.ini"; }
run() { # run NAME COUNT: the agent's dump in NAME.out, its log in NAME.err
  ERG_ROCM_STANDIN_SCRIPT=$dir/rocm ERG_NVML_STANDIN_SCRIPT=$dir/nvml \
    "$AGENT" -c "$dir/agent.ini" --dump --count "$2" --interval 0.5 --node gpu-node \
    --collection proc >"$dir/$1.out" 2>"$dir/$1.err"
}

echo "a: gpu = rocm"
ini rocm "$NVML" "$ROCM"
run a 3
grep -q "GPUs: 2 through rocm (Instinct-A, ...): energy counter on 1" "$dir/a.err" ||
  { echo "FAIL: no GPU line"; cat "$dir/a.err"; exit 1; }
python3 - "$dir/a.out" "$gpu_a" "$gpu_b" "$(id -u)" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
a, b, uid = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert {"cpu_time", "gpu_energy", "gpu_sm_share"} <= set(objs[0]["features"]), objs[0]
samples = [o for o in objs[1:] if o["type"] == "sample"]
assert len(samples) == 3 and len(objs) == 4, objs
near = lambda x, y, rel: abs(x - y) <= rel * abs(y)
from agent_gpu_check import reads_in_sweeps
for k in (0, 1):
    reads_in_sweeps(samples, k)
for s in samples:
    g0, g1 = s["gpus"]
    assert (g0["index"], g0["uuid"], g0["name"]) == (0, "AMD-00000000000000a1", "Instinct-A"), g0
    assert (g1["index"], g1["uuid"]) == (1, "AMD-pci-0000:11:00.0"), g1
    wall = g0["interval_ns"] / 1e9
    # GPU 0: the energy accumulator; GPU 1 has none: integrated power.
    assert g0["has_energy"] and g0["energy_from_counter"], g0
    assert near(g0["energy_joules"], 250 * wall, 0.02) and near(g0["power_watts"], 250, 0.02), g0
    assert g1["has_energy"] and not g1["energy_from_counter"] and near(g1["power_watts"], 70, 1e-6)
    assert g0["util_percent"] == 80 and g0["mem_util_percent"] == 30 and g0["sm_shares"], g0
    assert g1["util_percent"] == 40 and g1["sm_shares"] and not g0["mig"], g1
    procs = {p["pid"]: p for p in s["procs"]}
    pa, pb = procs[a], procs[b]
    for p in (pa, pb):
        assert p["comm"] == "sleep" and p["uid"] == uid and p["cpu_ns"] == 0, p
        assert [u["gpu_index"] for u in p["gpu"]] == [0, 1], p
    # GPU 0 by CU occupancy (60 %, 20 %); GPU 1 reports none: by VRAM.
    assert near(pa["gpu"][0]["sm_share"], 0.75, 1e-3) and near(pb["gpu"][0]["sm_share"], 0.25, 1e-3)
    assert pa["gpu"][0]["sm_percent"] == 60 and pa["gpu"][0]["used_memory_bytes"] == 1 << 30
    assert near(pa["gpu"][1]["sm_share"], 0.25, 1e-3) and near(pb["gpu"][1]["sm_share"], 0.75, 1e-3)
    assert pb["gpu"][1]["used_memory_bytes"] == 768 << 20 and pb["gpu"][1]["sm_percent"] == 0
    assert all("gpu" not in p for p in s["procs"] if p["pid"] not in (a, b))
print("a ok:", samples[-1]["gpus"][0]["energy_joules"], "J,", pa["gpu"])
PY

echo "b: gpu = auto, NVIDIA's and AMD's GPUs"
ini auto "$NVML" "$ROCM"
run b 2
grep -q "GPUs: 3 through nvml+rocm (StandIn-NV, ...)" "$dir/b.err" ||
  { echo "FAIL: no GPU line"; cat "$dir/b.err"; exit 1; }
python3 - "$dir/b.out" "$gpu_a" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
a = int(sys.argv[2])
samples = [o for o in objs[1:] if o["type"] == "sample"]
assert len(samples) == 2, objs
for s in samples:
    assert [(g["index"], g["uuid"]) for g in s["gpus"]] == [
        (0, "GPU-erg-test-nv"), (1, "AMD-00000000000000a1"), (2, "AMD-pci-0000:11:00.0")], s["gpus"]
    assert abs(s["gpus"][0]["power_watts"] - 150) < 3, s["gpus"][0]
    pa = [p for p in s["procs"] if p["pid"] == a][0]
    assert [u["gpu_index"] for u in pa["gpu"]] == [0, 1, 2], pa
    assert abs(pa["gpu"][0]["sm_share"] - 1) < 1e-6 and abs(pa["gpu"][1]["sm_share"] - 0.75) < 1e-3
print("b ok")
PY

echo "c: gpu = rocm without ROCm SMI"
ini rocm "$NVML" /nonexistent/librocm_smi64.so
rc=0; run c 1 || rc=$?
[ "$rc" = 1 ] && grep -q "gpu = rocm, but ROCm SMI is unusable: /nonexistent/librocm_smi64.so" \
  "$dir/c.err" || { echo "FAIL: gpu = rocm without it: rc $rc"; cat "$dir/c.err"; exit 1; }
ini amd "$NVML" "$ROCM"
rc=0; run cbad 1 || rc=$?
[ "$rc" != 0 ] && grep -q "key 'gpu': 'amd' is not auto, off, nvml or rocm" "$dir/cbad.err" ||
  { echo "FAIL: gpu = amd accepted: rc $rc"; cat "$dir/cbad.err"; exit 1; }

echo "d: the AMD GPUs lost mid-run"
echo "fail_when $dir/lost" >>"$dir/rocm"
ini rocm "$NVML" "$ROCM"
run d 8 &
lose_after_first_gpu_sample $!
python3 - "$dir/d.out" "$dir/d.err" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
log = open(sys.argv[2]).read().splitlines()
stopped = [l for l in log if "GPU sampling stopped" in l]
assert len(stopped) == 1 and "RSMI_STATUS_UNEXPECTED_SIZE" in stopped[0], log
hellos = [i for i, o in enumerate(objs) if o["type"] == "hello"]
assert len(hellos) == 2, hellos
assert not [x for x in objs[hellos[1]]["features"] if x.startswith("gpu")], objs[hellos[1]]
before = [o for o in objs[1:hellos[1]] if o["type"] == "sample"]
after = [o for o in objs[hellos[1]:] if o["type"] == "sample"]
assert before and all(len(s["gpus"]) == 2 for s in before), before
assert len(after) >= 2 and len(before) + len(after) == 8, (len(before), len(after))
assert all("gpus" not in s and s["totals"]["ncpu"] >= 1 for s in after), after
print("d ok:", stopped[0])
PY
echo "all ok"
