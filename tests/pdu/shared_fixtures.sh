#!/usr/bin/env bash
# Probes every recorded walk in DIR (snmpsimd community = file name): each
# must be identified by sysObjectID, and every value the probe prints must
# be the one in the recording: for each outlet, the raw value at the OID the
# probe says it read ("oids" in --json), times the factor it says it applied
# ("raw"), equals its watts and kWh (absent or negative in the recording:
# null); names equal the recorded strings; at least one outlet's power comes
# from the recording. Skips (77) when DIR does not exist in this checkout.
# EXCLUDE="name ..." leaves out walks whose profile cannot be auto-detected
# (the project's own fixtures have two: generic, Liebert).
# usage: shared_fixtures.sh PROBE DIR
set -euo pipefail
PROBE=$1; DIR=$2
[ -d "$DIR" ] && ls "$DIR"/*.snmprec >/dev/null 2>&1 || { echo "SKIP: no $DIR"; exit 77; }
. "$(dirname "$0")/snmp_lib.sh"
pdu_need snmpsimd snmpget python3
mkdir -p "$PDU_TMP/walks"
for f in "$DIR"/*.snmprec; do
  c=$(basename "$f" .snmprec)
  case " ${EXCLUDE:-} " in *" $c "*) continue ;; esac
  cp "$f" "$PDU_TMP/walks/"
done
PORT=$(pdu_free_port)
pdu_snmpsimd "$PDU_TMP/walks" "$PORT"
fail=0
for f in "$PDU_TMP"/walks/*.snmprec; do
  c=$(basename "$f" .snmprec)
  if ! "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community "$c" --json >"$PDU_TMP/$c.json" \
       2>"$PDU_TMP/$c.err"; then
    echo "$c: FAILED: $(cat "$PDU_TMP/$c.err")"; fail=1; continue
  fi
  python3 - "$f" "$PDU_TMP/$c.json" <<'PY' || fail=1
import json, math, sys

def load_walk(path):
    """snmprec: OID|TYPE|VALUE; TYPE 4x is hex-encoded text."""
    rec = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        parts = line.rstrip("\n").split("|", 2)
        if len(parts) != 3:
            continue
        oid, typ, val = parts
        if typ.endswith("x"):
            try:
                val = bytes.fromhex(val).decode("utf-8", "replace")
            except ValueError:
                continue
            typ = typ[:-1]
        rec[oid.lstrip(".")] = (typ, val)
    return rec

NUMERIC = {"2", "65", "66", "67", "70"}

def expect(rec, oid, scale):
    """The value the probe must show for oid: None when absent/negative."""
    if not oid or oid not in rec or rec[oid][0] not in NUMERIC:
        return None
    raw = int(rec[oid][1])
    return None if raw < 0 else raw * scale

def same(got, want):
    if want is None:
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)

rec, j = load_walk(sys.argv[1]), json.load(open(sys.argv[2]))
name = sys.argv[1].rsplit("/", 1)[-1][:-len(".snmprec")]
errs, from_walk = [], 0
if "sysObjectID" not in j["profile_reason"]:
    errs.append(f"profile {j['profile']} not chosen by sysObjectID")
raw = j.get("raw")
if raw is None:
    errs.append("no raw OIDs in --json")
    raw = {"power_scale_watts": 0, "energy_scale_joules": 0, "total_power_oid": None}
for o in j["outlets"]:
    oids = o.get("oids", {})
    w = expect(rec, oids.get("power"), raw["power_scale_watts"])
    e = expect(rec, oids.get("energy"), raw["energy_scale_joules"])
    e = None if e is None else e / 3.6e6
    from_walk += w is not None
    if not same(o["watts"], w):
        errs.append(f"outlet {o['index']}: {o['watts']} W, recording says {w}")
    if not same(o["energy_kwh"], e):
        errs.append(f"outlet {o['index']}: {o['energy_kwh']} kWh, recording says {e}")
    n = oids.get("name")
    if n in rec and rec[n][0] == "4" and rec[n][1].isprintable() and o["name"] != rec[n][1]:
        errs.append(f"outlet {o['index']}: name {o['name']!r}, recording says {rec[n][1]!r}")
t = raw.get("total_power_oid")
if t and not same(j["total_watts"], expect(rec, t, raw["total_power_scale_watts"])):
    errs.append(f"total {j['total_watts']} W, recording says {expect(rec, t, raw['total_power_scale_watts'])}")
if from_walk == 0:
    errs.append("no outlet power came from the recording")
print(f"{name}: {j['profile']}, {len(j['outlets'])} outlets, {from_walk} powers from the recording: "
      + ("ok" if not errs else "; ".join(errs[:6])))
sys.exit(1 if errs else 0)
PY
done
exit $fail
