#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-agent with GPUs. No GPU exists where this runs, so the NVML stand-in
# (nvml_standin.c) serves two scripted GPUs, used by two `sleep`
# processes of this test (idle on the CPU, so only their GPU use brings
# them into the samples):
#  b. the samples carry each GPU's energy and power, and on those
#     processes' entries (command, uid, cgroup keys as for any process)
#     their SM shares and memory;
#  c. no NVML library: no GPU features, no GPU fields, no warning;
#     gpu = nvml then refuses to start;
#  d. the GPUs lost mid-run: one log line, the hello again without the
#     GPU features, and the samples go on with their CPU fields.
set -euo pipefail
AGENT=$1
STANDIN=$2
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
dir=$(mktemp -d)
. "$(dirname "$0")/agent_gpu_lib.sh"
sleep 60 & gpu_a=$!
sleep 60 & gpu_b=$!
burner=
trap 'kill $gpu_a $gpu_b $burner 2>/dev/null || true; rm -rf "$dir"' EXIT

cat >"$dir/script" <<EOF
gpu 0 uuid=GPU-erg-test-0 name=StandIn-A
gpu 1 uuid=GPU-erg-test-1 name=StandIn-B energy=0
at 0 gpu=0 power_w=250 util=80 memutil=30 proc=$gpu_a:60:20:1024 proc=$gpu_b:20:5:512
at 0 gpu=1 power_w=70 util=0 proc=$gpu_b:0:0:256
EOF
# ROCm SMI never found: these are NVML's cases (agent_gpu_rocm.sh: AMD's).
ini() { printf '[agent]\ngpu = %s\nnvml_library = %s\nrocm_smi_library = %s\n' "$1" "$2" \
  /nonexistent/librocm_smi64.so >"$dir/agent.ini"; }
run() { # run NAME COUNT: the agent's dump in NAME.out, its log in NAME.err
  "$AGENT" -c "$dir/agent.ini" --dump --count "$2" --interval 0.5 --node gpu-node \
    --collection proc >"$dir/$1.out" 2>"$dir/$1.err"
}

echo "b: GPU fields on the processes' entries"
ini nvml "$STANDIN"
ERG_NVML_STANDIN_SCRIPT=$dir/script run b 3
python3 - "$dir/b.out" "$gpu_a" "$gpu_b" "$(id -u)" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
a, b, uid = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hello = objs[0]
assert {"cpu_time", "gpu_energy", "gpu_sm_share"} <= set(hello["features"]), hello
samples = [o for o in objs[1:] if o["type"] == "sample"]
assert len(samples) == 3 and len(objs) == 4, objs
near = lambda x, y, rel: abs(x - y) <= rel * abs(y)
from agent_gpu_check import reads_in_sweeps
for k in (0, 1):
    reads_in_sweeps(samples, k)
for s in samples:
    g0, g1 = s["gpus"]
    assert (g0["index"], g0["uuid"], g0["name"]) == (0, "GPU-erg-test-0", "StandIn-A"), g0
    assert g1["uuid"] == "GPU-erg-test-1", g1
    wall = g0["interval_ns"] / 1e9
    # GPU 0: the energy counter; GPU 1 has none: integrated power.
    assert g0["has_energy"] and g0["energy_from_counter"], g0
    assert near(g0["energy_joules"], 250 * wall, 0.02) and near(g0["power_watts"], 250, 0.02), g0
    assert g1["has_energy"] and not g1["energy_from_counter"], g1
    assert near(g1["power_watts"], 70, 1e-6), g1
    assert g0["util_percent"] == 80 and g0["mem_util_percent"] == 30 and g0["sm_shares"], g0
    assert not g0["mig"] and not g1["mig"]
    # GPU 1: a context (gpu_b's) but no activity, not busy: idle power.
    assert not g0["idle"] and g1["idle"] and g1["sm_shares"], (g0, g1)
    procs = {p["pid"]: p for p in s["procs"]}
    assert a in procs and b in procs, sorted(procs)
    pa, pb = procs[a], procs[b]
    for p in (pa, pb):
        # The sweep's identity: command, uid, cgroup and keys, no CPU.
        assert p["comm"] == "sleep" and p["uid"] == uid and p["start_time_ns"] > 0, p
        assert p["cpu_ns"] == 0 and "job" in p and "unit" in p and "cgroup" in p, p
    assert [u["gpu_index"] for u in pa["gpu"]] == [0], pa
    assert [u["gpu_index"] for u in pb["gpu"]] == [0, 1], pb
    ua, ub0, ub1 = pa["gpu"][0], pb["gpu"][0], pb["gpu"][1]
    assert near(ua["sm_share"], 0.75, 1e-3) and near(ub0["sm_share"], 0.25, 1e-3), (ua, ub0)
    assert 40 <= ua["sm_percent"] <= 75 and ub0["sm_percent"] < ua["sm_percent"], (ua, ub0)
    assert ua["used_memory_bytes"] == 1 << 30 and ub0["used_memory_bytes"] == 512 << 20
    assert ub1["sm_share"] == 0 and ub1["used_memory_bytes"] == 256 << 20, ub1
    # Only the GPU processes carry GPU entries; no MIG here: no instance.
    assert all("gpu" not in p for p in s["procs"] if p["pid"] not in (a, b))
    assert not [u for u in (ua, ub0, ub1) if "mig_gpu_instance" in u], (ua, ub0, ub1)
print("b ok:", samples[-1]["gpus"][0]["energy_joules"], "J,", ua)
PY

echo "m: a MIG GPU: the processes' instances, no shares, not idle"
cat >"$dir/mig" <<EOF
gpu 0 uuid=GPU-erg-mig-0 name=StandIn-MIG mig=1
at 0 gpu=0 power_w=200 util=0 proc=$gpu_a:0:0:1024:3/0 proc=$gpu_b:0:0:512:5/1
EOF
ini nvml "$STANDIN"
ERG_NVML_STANDIN_SCRIPT=$dir/mig run m 2
python3 - "$dir/m.out" "$gpu_a" "$gpu_b" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
a, b = int(sys.argv[2]), int(sys.argv[3])
samples = [o for o in objs if o["type"] == "sample"]
assert len(samples) == 2, objs
for s in samples:
    g = s["gpus"][0]
    assert g["mig"] and not g["sm_shares"] and not g["idle"], g
    use = {p["pid"]: p["gpu"][0] for p in s["procs"] if "gpu" in p}
    assert (use[a]["mig_gpu_instance"], use[a]["mig_compute_instance"]) == (3, 0), use[a]
    assert (use[b]["mig_gpu_instance"], use[b]["mig_compute_instance"]) == (5, 1), use[b]
    assert use[a]["sm_share"] == 0 and use[a]["used_memory_bytes"] == 1 << 30, use[a]
print("m ok:", use)
PY

echo "c: no NVML library"
ini auto /nonexistent/libnvidia-ml.so.1
ERG_NVML_STANDIN_SCRIPT=$dir/script run c 2
ini off "$STANDIN"
ERG_NVML_STANDIN_SCRIPT=$dir/script run off 2
python3 - "$dir/c.out" "$dir/off.out" <<'PY'
import json, sys
for f in sys.argv[1:]:
    objs = [json.loads(l) for l in open(f)]
    assert len(objs) == 3 and objs[0]["type"] == "hello", objs
    assert not [x for x in objs[0]["features"] if x.startswith("gpu")], objs[0]
    assert objs[0]["features_off"] == {}, objs[0]
    for s in objs[1:]:
        assert "gpus" not in s and all("gpu" not in p for p in s["procs"]), s
print("c ok")
PY
if grep -E "warn|error|GPU|NVML|nvml" "$dir/c.err" "$dir/off.err"; then
  echo "FAIL: the agent without NVML logged the above"; exit 1
fi
ini nvml /nonexistent/libnvidia-ml.so.1
rc=0; run cfail 1 || rc=$?
[ "$rc" = 1 ] && grep -q "gpu = nvml, but NVML is unusable: /nonexistent/libnvidia-ml.so.1" \
  "$dir/cfail.err" || { echo "FAIL: gpu = nvml without NVML: rc $rc"; cat "$dir/cfail.err"; exit 1; }
# A library but no driver (the stand-in without a script): one info line.
ini auto "$STANDIN"
run nodrv 1
grep -q "GPUs not sampled: nvmlInit_v2: Driver Not Loaded" "$dir/nodrv.err" ||
  { echo "FAIL: no driver not said"; cat "$dir/nodrv.err"; exit 1; }

echo "d: the GPUs lost mid-run"
echo "fail_when $dir/lost" >>"$dir/script"
sha256sum /dev/zero & burner=$!
ini auto "$STANDIN"
ERG_NVML_STANDIN_SCRIPT=$dir/script run d 8 &
lose_after_first_gpu_sample $!
python3 - "$dir/d.out" "$dir/d.err" "$burner" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
log = open(sys.argv[2]).read().splitlines()
burner = int(sys.argv[3])
stopped = [l for l in log if "GPU sampling stopped" in l]
assert len(stopped) == 1 and "GPU is lost" in stopped[0], log
assert "gpu_energy" in objs[0]["features"], objs[0]
hellos = [i for i, o in enumerate(objs) if o["type"] == "hello"]
assert len(hellos) == 2, hellos
again = objs[hellos[1]]
assert not [x for x in again["features"] if x.startswith("gpu")], again
assert set(again["features"]) == set(objs[0]["features"]) - {"gpu_energy", "gpu_sm_share"}
before = [o for o in objs[1:hellos[1]] if o["type"] == "sample"]
after = [o for o in objs[hellos[1]:] if o["type"] == "sample"]
assert before and all(len(s["gpus"]) == 2 for s in before), before
assert len(after) >= 2 and len(before) + len(after) == 8, (len(before), len(after))
for s in after:
    assert "gpus" not in s and all("gpu" not in p for p in s["procs"]), s
    assert s["totals"]["cpu_busy_ns"] > 0 and s["totals"]["ncpu"] >= 1, s["totals"]
    mine = [p for p in s["procs"] if p["pid"] == burner]
    assert mine and mine[0]["cpu_ns"] > 0 and mine[0]["comm"] == "sha256sum", s["procs"]
print("d ok: GPUs in", len(before), "samples, then", len(after), "without;", stopped[0])
PY
echo "all ok"
