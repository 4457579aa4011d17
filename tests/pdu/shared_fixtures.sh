#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Probes every recorded walk in DIR (snmpsimd community = file name) with no
# profile named: each must be identified (by sysObjectID and its tables, or
# by its tables alone), and every value the probe prints, at every level
# (device, inlet, phase, bank, outlet, sensor), must be the one in the
# recording: the raw value at the OID the probe says it read ("oids" in
# --json) times the factor it says it applied ("scales") (absent, negative
# or not a number in the recording: null); watts follow from those values
# as the probe says ("power_from": measured W, VA x PF, or A x V x 1);
# names equal the recorded strings; at least one power comes from the
# recording. Skips (77) when DIR does not exist in this checkout.
# EXCLUDE="name ..." leaves out walks that need a named profile (the
# project's own generic-acme). REFUSE="name ..." are walks in which no
# power table of any known MIB answers (sensor-only boxes, and the layouts
# docs/pdu.md lists as not supported): the probe must refuse them with a
# clear message and exit 2, and print no values.
# With ERG (the erg CLI), the config the probe suggests for each walk it
# reads (its "# config:" part, NAME renamed) must pass erg check-config.
# usage: shared_fixtures.sh PROBE DIR [ERG]
set -euo pipefail
PROBE=$1; DIR=$2; ERG=${3:-}
[ -d "$DIR" ] && ls "$DIR"/*.snmprec >/dev/null 2>&1 || { echo "SKIP: no $DIR"; exit 77; }
. "$(dirname "$0")/snmp_lib.sh"
erg_need snmpsimd snmpget python3
mkdir -p "$PDU_TMP/walks"
for f in "$DIR"/*.snmprec; do
  c=$(basename "$f" .snmprec)
  case " ${EXCLUDE:-} " in *" $c "*) continue ;; esac
  cp "$f" "$PDU_TMP/walks/"
done
PORT=$(free_udp_port)
pdu_snmpsimd "$PDU_TMP/walks" "$PORT"
fail=0
for f in "$PDU_TMP"/walks/*.snmprec; do
  c=$(basename "$f" .snmprec)
  case " ${REFUSE:-} " in *" $c "*)
    rc=0
    "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community "$c" --json >"$PDU_TMP/$c.json" \
      2>"$PDU_TMP/$c.err" || rc=$?
    if [ "$rc" = 2 ] && [ ! -s "$PDU_TMP/$c.json" ] &&
       grep -q "no known PDU table answers" "$PDU_TMP/$c.err"; then
      echo "$c: refused as expected: $(cat "$PDU_TMP/$c.err")"
    else
      echo "$c: FAILED: want a refusal (exit 2, no output), got exit $rc: $(cat "$PDU_TMP/$c.err")"
      fail=1
    fi
    continue ;;
  esac
  if ! "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community "$c" --json >"$PDU_TMP/$c.json" \
       2>"$PDU_TMP/$c.err"; then
    echo "$c: FAILED: $(cat "$PDU_TMP/$c.err")"; fail=1; continue
  fi
  if [ -n "$ERG" ]; then
    "$PROBE" --driver snmp --host 127.0.0.1:"$PORT" --community "$c" >"$PDU_TMP/$c.txt" 2>&1 || true
    sed -n '/^# config:/,$p' "$PDU_TMP/$c.txt" | sed 's/NAME/src/g' >"$PDU_TMP/$c.conf"
    if ! grep -q '^power = src' "$PDU_TMP/$c.conf"; then
      echo "$c: FAILED: the probe suggests no [node] power"; fail=1
    elif ! "$ERG" check-config "$PDU_TMP/$c.conf" >"$PDU_TMP/$c.cc" 2>&1; then
      echo "$c: FAILED: check-config refuses the suggested config: $(cat "$PDU_TMP/$c.cc")"; fail=1
    else
      echo "$c: suggested $(grep '^power = ' "$PDU_TMP/$c.conf"): check-config ok"
    fi
  fi
  python3 - "$f" "$PDU_TMP/$c.json" <<'PY' || fail=1
import json, math, re, sys

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
# Text readings may carry their quantity's unit, with an SI prefix
# ("232.6V", "0.061kW", "2.28kWh"); the probe's "units" says which columns
# are read so. Any other unit, or none where one is due, is no reading.
UNIT = {"power": "W", "va": "VA", "current": "A", "voltage": "V",
        "voltage_borrowed": "V", "energy": "Wh", "power_factor": ""}
PREFIX = {"": 1.0, "m": 1e-3, "k": 1e3, "M": 1e6}

def expect(rec, oid, scale, unit=None):
    """The value the probe must show for oid: None when absent/negative.
    Numbers sent as text count only when the whole text is one number
    ("0.061kW", "12<script>" are no reading), or, for a column read with
    a unit, one number and that unit."""
    if not oid or oid not in rec:
        return None
    typ, val = rec[oid]
    if typ in NUMERIC:
        raw = int(val)
    elif typ == "4":
        num = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
        if unit:
            m = re.fullmatch(r"\s*(" + num + r") *([mkM]?)" + re.escape(unit) + r"\s*", val)
            if not m:
                return None
            raw = float(m.group(1)) * PREFIX[m.group(2)]
        else:
            m = re.fullmatch(r"\s*" + num + r"\s*", val)
            if not m:
                return None
            raw = float(m.group(0))
    else:
        return None
    return None if raw < 0 else raw * scale

def same(got, want):
    if want is None:
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)

rec, j = load_walk(sys.argv[1]), json.load(open(sys.argv[2]))
name = sys.argv[1].rsplit("/", 1)[-1][:-len(".snmprec")]
errs, from_walk, levels = [], 0, {}
for r in j["rows"]:
    where = f"{r['level']} {r['index']}"
    levels[r["level"]] = levels.get(r["level"], 0) + 1
    oids, scales, vals = r.get("oids", {}), r.get("scales", {}), r.get("values", {})
    units = r.get("units", {})
    for q, got in vals.items():
        if q in units and units[q] != UNIT.get(q):
            errs.append(f"{where} {q}: read with unit {units[q]!r}, not {UNIT.get(q)!r}")
        want = expect(rec, oids.get(q), scales.get(q) or 0, UNIT.get(q) if q in units else None)
        # A value the physics checks refused shows as absent, with the reason.
        if got is None and want is not None and "impossible" in (r.get("problem") or ""):
            continue
        if not same(got, want):
            errs.append(f"{where} {q}: {got}, recording says {want} ({oids.get(q)})")
        # Physics on every value shown: a wrong scale or a hostile value fails here.
        if got is None:
            continue
        if q in ("voltage", "voltage_borrowed") and not (got == 0 or 80 <= got <= 480):
            errs.append(f"{where} {q}: {got} V, neither 0 nor 80-480 V")
        if q == "power_factor" and not 0 <= got <= 1:
            errs.append(f"{where} {q}: {got}, outside 0-1")
        if q in ("power", "va") and not 0 <= got <= 100e3:
            errs.append(f"{where} {q}: {got}, outside 0-100 kW")
    if vals.get("power") is not None and vals.get("va") is not None and \
            vals["power"] > 1.1 * vals["va"] + 10:
        errs.append(f"{where}: {vals['power']} W more than {vals['va']} VA")
    src, w = r["power_from"], r["watts"]
    volts = vals.get("voltage") if vals.get("voltage") is not None else vals.get("voltage_borrowed")
    if src == "measured":
        want = vals.get("power")
        from_walk += want is not None
    elif src == "va_pf":
        want = vals["va"] * vals["power_factor"]
    elif src == "estimated":
        want = vals["va"] if vals.get("va") is not None else vals["current"] * volts
    else:
        want = None
    if not same(w, want):
        errs.append(f"{where}: {w} W ({src}), values say {want}")
    e = vals.get("energy")
    if not same(r["energy_kwh"], None if e is None else e / 3.6e6):
        errs.append(f"{where}: {r['energy_kwh']} kWh, values say {e} J")
    n = oids.get("name")
    if n in rec and rec[n][0] == "4" and rec[n][1].isprintable() and r["name"] != rec[n][1].strip():
        errs.append(f"{where}: name {r['name']!r}, recording says {rec[n][1]!r}")
if from_walk == 0 and not any(r["watts"] is not None for r in j["rows"]):
    errs.append("no power came from the recording")
# Physics, whatever the vendor: a scale off by 10x or more breaks these.
# Active power is at most the apparent power (V x A, or VA), and at least
# a fifth of it on a loaded row (delta wiring and poor power factors stay
# well inside); what the levels below meter adds up to no more than what
# the levels above do, and the phases to about their inlet or device.
def total(level):
    ws = [r["watts"] for r in j["rows"] if r["level"] == level and r["watts"] is not None]
    return sum(ws) if ws else None
for r in j["rows"]:
    v, w = r.get("values", {}), r["watts"]
    volts = v.get("voltage") if v.get("voltage") is not None else v.get("voltage_borrowed")
    app = v.get("va")
    if app is None and volts is not None and v.get("current") is not None:
        app = volts * v["current"]
    if r["power_from"] == "measured" and w is not None and app is not None and w > 20 and app > 20:
        if not 0.2 <= w / app <= 1.1 * (3 ** 0.5):
            errs.append(f"{r['level']} {r['index']}: {w} W against {app:.1f} VA")
top = total("device") if total("device") is not None else total("inlet")
if top is not None and top > 50:
    for lvl in ("outlet", "bank", "phase"):
        t = total(lvl)
        if t is not None and t > 1.2 * top + 20:
            errs.append(f"{lvl}s add up to {t:.1f} W, more than the {top:.1f} W above them")
    ph = total("phase")
    if ph is not None and ph > 20 and ph < 0.8 * top - 20:
        errs.append(f"phases add up to {ph:.1f} W of {top:.1f} W")
# Firmware families whose scale is not their MIB's (profile .fw): the
# family's scale is taken and said.
FIRMWARE = {"hpe-pdumm": ("firmware 1.00.x", "bank", 1, "current", 3.0)}
if name in FIRMWARE:
    said, lvl, idx, q, want = FIRMWARE[name]
    got = [r["values"].get(q) for r in j["rows"] if r["level"] == lvl and r["index"] == idx
           and (r.get("unit") or "1") == "1"]  # PDU 1's (the module has two)
    if said not in j["profile_reason"] or got != [want]:
        errs.append(f"{lvl} {idx} {q}: {got}, want {want} and '{said}' in the reason")
# Index arcs the device decides ("*" in a profile): found, and said; an
# index tail (Chatsworth's MAC after the entity) is no unit of the rows.
ARCS = {"liebert_mph2rg": ("outlet index arcs 1.2", "outlet", 16),
        "chatsworth-pdu": ('outlet index tail "000ED300AD21"', "outlet", 24)}
if name in ARCS:
    said, lvl, count = ARCS[name]
    got = sum(r["level"] == lvl for r in j["rows"])
    if said not in j["profile_reason"] or got != count:
        errs.append(f"{got} {lvl} rows, want {count} and '{said}' in the reason")
    if "index tail" in said and any(r.get("unit") for r in j["rows"]):
        errs.append("rows with a unit where the profile has an index tail")
# Units the device decides (issue 34 item 1: a daisy chain's members, a
# Sentry4's cords; the project's walks): every unit's rows, each with its
# unit, and rows of one unit told apart from the other's by their values.
UNITS = {"raritan-pdu2-chain": ("outlet", {"1", "210"}, 12),
         "servertech-sentry4-cordb": ("outlet", {"1.1", "1.2"}, 8),
         # the shared recordings' chains: master and one link unit / tower
         "sentry4": ("phase", {"1.1", "2.1"}, 6),
         "sentry3": ("inlet", {"1", "2"}, 2),
         # chains read from every PDU, not PDU 1 only (issue 34 item 1):
         # Liebert PDUs {pdu}.{branch}, HPE iPDU cores, Avocent PM
         # {serial port}.{PDU}
         "liebert-mph2-chain": ("outlet", {"1.1", "2.2"}, 5),
         "hpe-ipdu-cores": ("bank", {"1", "2"}, 5),
         "avocent-pm": ("outlet", {"1.1", "1.2"}, 6),
         "eaton-nlogic": ("outlet", {"1", "2"}, 9)}
if name in UNITS:
    lvl, want, count = UNITS[name]
    rs = [r for r in j["rows"] if r["level"] == lvl]
    got = {r.get("unit") for r in rs}
    if got != want or len(rs) != count:
        errs.append(f"{lvl} units {sorted(map(str, got))} in {len(rs)} rows, want "
                    f"{sorted(want)} in {count}")
    for r in rs:
        o = r.get("oids", {}).get("power") or r.get("oids", {}).get("current") or ""
        if ("." + r["unit"] + "." + str(r["index"])) not in o:
            errs.append(f"{lvl} {r['unit']}.{r['index']} read at {o}")
# Rows numbered over a whole chain (APC rPDU2: host first, then guests):
# every row listed, not only the host's count of them.
# A unit's own count keeps its stray rows out (hpe-pdumm: NumBreakers 3 per
# PDU, rows 4-6 of each read 0 V 0 A; eaton-nlogic: phases 2-3 of a
# single-phase PDU).
ROWS = {"apc-rpdu2-guest": ("outlet", 8), "liebert-mph2-chain": ("inlet", 2),
        "avocent-pm": ("inlet", 2), "hpe-ipdu-cores": ("device", 2),
        "hpe-pdumm": ("bank", 6), "eaton-nlogic": ("phase", 2)}
if name in ROWS:
    lvl, count = ROWS[name]
    got = sum(r["level"] == lvl for r in j["rows"])
    if got != count:
        errs.append(f"{got} {lvl} rows, want {count}")
how = "sysObjectID" if "suggests " + j["profile"] in j["profile_reason"] else "tables"
print(f"{name}: {j['profile']} (by {how}), "
      + ", ".join(f"{v} {k}" for k, v in levels.items())
      + f", {from_walk} measured powers: " + ("ok" if not errs else "; ".join(errs[:6])))
sys.exit(1 if errs else 0)
PY
done
exit $fail
