#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-pdusim's BMC-shaped Redfish readings (tests/accuracy/bmc.sh uses
# them): against the simulator's own truth log, a shaped chassis answers
# whole watts, each answer late by a delay in its range, with the value
# of a sample of the second before the request came in; the averaged
# chassis answers the mean of 5 samples 1 s apart. Each sample holds the
# power at its own time on the schedule, however late the simulator's
# tick ran (a loaded machine). A sensor with a read time (read=MIN:MAX)
# samples a refresh plus that after its last sample, so its phase drifts
# where the others' holds; a Sensor's ReadingTime is its sample's time on
# the BMC's clock (clock=S off ours). Two chassis of one node with the same
# shape (n1t, n1u) are independent draws: their own answer delays and
# sample times, not one stream seen twice.
# usage: bmc_shape.sh PDUSIM
set -euo pipefail
PDUSIM=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/lib.sh"
erg_need python3 curl ss
erg_setup bmcshape
RP=$(free_port)
python3 "$here/bmc_tree.py" "$work/tree" n1 n1avg n1t:sensor n1u:sensor
# The power jumps between 0 and 300 W extra every 0.7 s (a GPU script of
# the simulator's, --gpu-ac-factor 1), updated every 0.2 s: a sample other
# than the right one, or one mean for another, shows.
python3 -c 'import random; r = random.Random(5)
for k in range(200): print(f"at {k * 0.7:.1f} gpu=0 power_w={r.choice([0, 100, 300])}")' \
  >"$work/gpu.txt"
"$PDUSIM" --redfish "$work/tree" --redfish-http "127.0.0.1:$RP" --node n1 --noise 0.3 \
  --quantum 0 --update 0.2 --lag 0 --truth "$work/truth.csv" \
  --gpu-script "n1=$work/gpu.txt" --gpu-ac-factor 1 \
  --redfish-channel "/redfish/v1/Chassis/n1=n1,quantum=1,refresh=1,delay=0.3:0.8" \
  --redfish-channel "/redfish/v1/Chassis/n1avg=n1,quantum=1,refresh=1,average=5,delay=0.3:0.8" \
  --redfish-channel "/redfish/v1/Chassis/n1t=n1,quantum=1,refresh=1,delay=0.3:0.8,read=0.1:0.2,clock=-3600.4" \
  --redfish-channel "/redfish/v1/Chassis/n1u=n1,quantum=1,refresh=1,delay=0.3:0.8,read=0.1:0.2,clock=-3600.4" \
  --redfish-log "$work/answers.csv" \
  >"$work/sim.log" 2>&1 &
pids+=($!)
wait_port "$RP" || { cat "$work/sim.log"; exit 1; }
sleep 6 # five samples for the mean
python3 - "$work" "$RP" <<'PY'
import bisect, calendar, concurrent.futures, csv, json, sys, time, urllib.request
work, port = sys.argv[1], sys.argv[2]
def get(chassis):
    t0 = time.time()
    doc = json.load(urllib.request.urlopen(
        f"http://127.0.0.1:{port}/redfish/v1/Chassis/{chassis}/Power"))
    return t0, time.time() - t0, doc["PowerControl"][0]["PowerConsumedWatts"]
answers = [(c, *get(c)) for _ in range(6) for c in ("n1", "n1avg")]
# The Sensors: their ReadingTime the sample's on a clock 3600.4 s behind;
# n1t and n1u asked at once, each by its own thread.
def sensor(chassis):
    # 8 answers at least, over 5 s at least: >= 4 samples of a 1 s sensor
    # for the drift check below (8 quick answers could span 2.4 s: 3).
    start, k = time.time(), 0
    while k < 8 or time.time() - start < 5:
        k += 1
        t0 = time.time()
        doc = json.load(urllib.request.urlopen(
            f"http://127.0.0.1:{port}/redfish/v1/Chassis/{chassis}/Sensors/TotalPower"))
        rt = calendar.timegm(time.strptime(doc["ReadingTime"][:19], "%Y-%m-%dT%H:%M:%S"))
        assert t0 - 3600.4 - 2.5 <= rt <= t0 - 3600.4, f"ReadingTime {doc['ReadingTime']} at {t0}"
    return k
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    asked = list(pool.map(sensor, ["n1t", "n1u"]))
log = list(csv.DictReader(open(f"{work}/answers.csv")))
def samples(chassis):
    return sorted({float(r["sample_unix_seconds"]) for r in log if f"/{chassis}/" in r["uri"]})
def off_grid(ts):  # how far each step between samples is from whole refreshes
    return [abs((b - a) - round(b - a)) for a, b in zip(ts, ts[1:])]
fixed, drift = off_grid(samples("n1")), off_grid(samples("n1t"))
assert len(fixed) >= 3 and max(fixed) < 0.005, f"n1's samples off its 1 s schedule: {fixed}"
assert len(drift) >= 3 and max(drift) > 0.05, f"n1t's samples hold their phase: {drift}"
# Each channel its own stream: n1u (n1t's shape, same node) neither answers
# with n1t's delays in turn nor samples at n1t's times.
def delays(chassis):
    return [float(r["delay_seconds"]) for r in log if f"/{chassis}/" in r["uri"]]
dt, du = delays("n1t"), delays("n1u")
assert [len(dt), len(du)] == asked, f"n1t {len(dt)}, n1u {len(du)} answers logged, {asked} asked"
n = min(len(dt), len(du))
assert dt[:n] != du[:n], f"n1t and n1u answer with one stream of delays: {dt}"
st, su = samples("n1t"), samples("n1u")
same = [a for a in st for b in su if abs(a - b) < 1e-6]
assert not same, f"n1t and n1u sample at the same times: {same}"
time.sleep(0.5)
rows = [l.split(",") for l in open(f"{work}/truth.csv").read().split("\n")[1:] if l]
tt, tw = [float(r[0]) for r in rows], [float(r[4]) for r in rows]
def truth(t):  # the simulator's power at t (it holds each update's value)
    return tw[max(0, bisect.bisect_right(tt, t) - 1)]
late = [d for _, _, d, _ in answers]
assert all(0.29 <= d <= 1.2 for d in late), f"answers not 0.3-0.8 s late: {late}"
assert max(late) - min(late) > 0.1, f"every answer equally late: {late}"
for c, t0, d, w in answers:
    assert w == int(w), f"{c}: {w} is not in 1 W steps"
    if c == "n1":  # a sample of the last second before the request
        cand = [truth(t0 - k / 1000) for k in range(0, 1101)]
        assert any(abs(w - x) <= 0.5 for x in cand), f"n1 {w} W: no sample before t0 ({cand[::100]})"
    else:  # the mean of 5 samples of the last 6 s, 1 s apart (any phase, 1 ms steps)
        means = [sum(truth(t0 - p / 1000 - k) for k in range(5)) / 5 for p in range(0, 1101)]
        assert any(abs(w - m) <= 0.5 for m in means), f"n1avg {w} W, means {means[::250]}"
print("ok:", [(c, round(d, 2), w) for c, _, d, w in answers])
PY
echo "ok: BMC-shaped readings"
