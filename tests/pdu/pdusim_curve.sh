#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-pdusim --curve: the simulated power follows a table of (load, watts)
# points with linear interpolation. Two nodes, each following a cgroup2
# group: one empty (load 0), one with a busy loop (load ~0.1-0.5). Every
# --truth row must show curve(load) — computed here independently — and
# both loads must have been seen. Run once with the shipped curve file and
# once with specpower:ROW from the shipped sample CSV.
# usage: pdusim_curve.sh PDUSIM CURVE_FILE SPECPOWER_CSV
set -euo pipefail
PDUSIM=$1; CURVE=$2; CSV=$3
. "$(dirname "$0")/snmp_lib.sh"
erg_need python3
erg_cgroup2
tag=erg-curve-$$
mkdir "$CG2/$tag-idle" "$CG2/$tag-busy" 2>/dev/null || { echo "SKIP: cannot create cgroups in $CG2"; exit 77; }
trap 'erg_cg_remove $tag-idle $tag-busy; pdu_cleanup' EXIT
erg_in_cg $tag-busy sh -c "while :; do :; done" &
run() { # curve-spec truth-file
  "$PDUSIM" --modbus 127.0.0.1:"$(free_port)" --node "idle=$SIMPREFIX/$tag-idle" \
    --node "busy=$SIMPREFIX/$tag-busy" --curve "$1" --specpower-csv "$CSV" --update 0.25 \
    --duration 3 --truth "$2" >"$PDU_TMP/sim.log"
}
run "$CURVE" "$PDU_TMP/t1.csv"
run specpower:300 "$PDU_TMP/t2.csv"
python3 - "$CURVE" "$CSV" "$PDU_TMP/t1.csv" "$PDU_TMP/t2.csv" <<'PY'
import csv, sys
curve_file, sample, t1, t2 = sys.argv[1:]
pts = [tuple(map(float, l.split("#")[0].split())) for l in open(curve_file)]
pts = [p for p in pts if p]
rows = [r for r in csv.DictReader(l for l in open(sample) if not l.startswith("#"))]
row = next(r for r in rows if r[""] == "300")
spec = [(0.0, float(row["ActiveIdle"]))] + [(k / 10, float(row[f"{k*10}_AvgPower"])) for k in range(1, 11)]
def interp(p, u):
    if u <= p[0][0]: return p[0][1]
    for (x0, y0), (x1, y1) in zip(p, p[1:]):
        if u <= x1: return y0 + (u - x0) / (x1 - x0) * (y1 - y0)
    return p[-1][1]
for name, truth, p in (("file", t1, pts), ("specpower:300", t2, spec)):
    seen = {"idle": [], "busy": []}
    for r in csv.DictReader(open(truth)):
        u, w = float(r["lagged_util"]), float(r["watts"])
        want = interp(p, u)
        assert abs(w - want) < 0.01, f"{name} {r['node']}: load {u:.4f} gave {w} W, curve says {want:.3f}"
        seen[r["node"]].append(u)
    idle_u = seen["idle"][1:]   # the first sample is before any interval
    busy_u = [u for u in seen["busy"][1:] if u > 0.01]  # any real load: CI may be busy
    assert idle_u and max(idle_u) < 0.01, f"{name}: idle group loads {idle_u}"
    assert len(busy_u) >= 3, f"{name}: busy group loads {seen['busy']}"
    print(f"ok {name}: load 0 -> {interp(p, 0):.1f} W; load {sum(busy_u)/len(busy_u):.3f} -> "
          f"{interp(p, sum(busy_u)/len(busy_u)):.1f} W (mean); {len(idle_u) + len(busy_u)} rows on the curve")
PY
