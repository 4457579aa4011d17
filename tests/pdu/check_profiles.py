# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks erg pdu probe --json output against the fixture values (written
out here by hand from tests/fixtures/snmprec, in W and kWh) and snmpget."""
import json, math, sys

D = sys.argv[1]
EXPECT = {
    # profile: (vendor, total W, [(name, W, kWh or None)])
    "apc-rpdu2": ("APC/Schneider", 1230.0, [
        ("node-01", 101, 1234.5), ("node-02", 0, 0.0), ("node-03", 250, 4021.0),
        ("node-04", 87, 77.7), ("node-05", 312, 9876.5), ("node-06", 45, 0.3),
        ("node-07", 199, 555.5), ("node-08", 160, 2468.0)]),
    "raritan-pdu2": ("Raritan", 1120.0, [
        ("gpu-a", 123.4, 1500.0), ("gpu-b", 0.0, 0.0), ("login", 98.7, 250.0),
        ("storage-1", 450.1, 9000.0), ("spare", 33.3, 0.123), ("db-main", 200.0, 4294000.0)]),
    "servertech-sentry4": ("Server Technology", 645.0, [
        ("srv1-psu1", 150, 10.0), ("srv2-psu1", 75, 2.5), ("srv3-psu1", 0, 0.0),
        ("srv4-psu1", 420, 777.777)]),
    "eaton-epdu": ("Eaton", 412.0, [
        ("compute-1", 230, 4000000.0), ("compute-2", 0, 0.0), ("compute-3", 118, 123.456),
        ("compute-4", 64, 0.999)]),
    "geist-v5": ("Vertiv/Geist", 322.0, [
        ("hpc-01", 310, 5550.0), ("switch", 12, 1.2), ("unused", 0, 0.0)]),
    "cyberpower-epdu2": ("CyberPower", None, [
        ("lab1", 55, None), ("lab2", 140, None), ("lab3", 0, None), ("lab4", 9, None)]),
    "liebert-mph2": ("Vertiv/Liebert", 1375.0, [
        ("rack7-n1", 512, 4321.5), ("rack7-n2", 498, 4000.7), ("rack7-n3", 365, 1.2),
        ("spare", 0, 0.0)]),
    "generic-acme": ("generic", None, [
        ("", 40, 18446744073709 / 3.6e6), ("", 50, 5 / 3.6e6), ("", 60, 0.0)]),
}
# snmpget raw value -> the probe field it must equal after scaling
CROSS = {
    "apc-rpdu2": (5, "energy_kwh", 0.1),         # 0.1 kWh units
    "raritan-pdu2": (1, "watts", 0.1),           # 1 decimal digit
    "servertech-sentry4": (4, "energy_kwh", 1e-3),  # Wh
    "eaton-epdu": (1, "energy_kwh", 1e-3),       # Wh
    "geist-v5": (1, "watts", 1.0),
    "cyberpower-epdu2": (2, "watts", 1.0),
    "liebert-mph2": (2, "energy_kwh", 0.1),      # 0.1 kWh units
}

# Synthetic walks (not recordings: no device of these families was at
# hand) written from the MIB's table layout, tests/fixtures/snmprec/NAME;
# the values a reader of the MIB expects, per row: (level, index, name,
# W, kWh), W and kWh from the MIB's units by hand; the index of a row of a
# unit ("*" arcs before the entity: every unit read) is "UNIT.N".
SYNTHETIC = {
    # CPQPOWER-MIB pdr: panels 0.1 kW and 0.01 kWh; breakers of each panel
    # (index {panel}.{breaker}) W and 0.01 kWh.
    "hpe-pdr": ("HPE", [("inlet", 1, "", 5200, 12345.67), ("inlet", 2, "", 3100, 7654.32),
                        ("bank", "1.1", "", 1800, 456.78), ("bank", "1.2", "", 2200, 512.34),
                        ("bank", "1.3", "", 1200, 98.76), ("bank", "2.1", "", 3100, 777.77)]),
    # PowerNet-MIB isxModularDistribution: 0.1 kW, 0.1 kWh everywhere;
    # outlets are the cables of each module ({module}.{cable}: 2 and 3).
    "apc-isx-dist": ("APC/Schneider", [("device", 1, "", 9500, 12345.6),
                                       ("inlet", 1, "Rack row A", 6000, 7777.7),
                                       ("inlet", 2, "Rack row B", 3500, 4567.9),
                                       ("phase", 1, "", 3200, 4123.4),
                                       ("phase", 2, "", 3500, 4234.5),
                                       ("phase", 3, "", 2800, 3987.7),
                                       ("outlet", "2.1", "rack-07 A", 2100, 500),
                                       ("outlet", "2.2", "rack-08 A", 1800, 432.1),
                                       ("outlet", "3.1", "rack-09 A", 2500, 600)]),
    # PWTv1-MIB: inlet 0.1 W and kWh; PduA outlets 0.1 W and kWh.
    "powertek-pwt": ("Powertek", [("inlet", 1, "", 654.3, 321),
                                  ("outlet", 1, "web-1", 332.5, 120),
                                  ("outlet", 2, "web-2", 243.5, 77),
                                  ("outlet", 3, "spare", 0, 0)]),
    # Chains: every unit's rows (issue 34). LIEBERT-GP-PDU-MIB, two PDUs:
    # W, 0.1 kWh; receptacles {pdu}.{branch}.{rcp}.
    "liebert-mph2-chain": ("Vertiv/Liebert", [
        ("inlet", "1.1", "", 900, 1234.5), ("inlet", "2.1", "", 600, 800.0),
        ("phase", "1.1.1", "", 900, None), ("phase", "2.1.1", "", 600, None),
        ("bank", "1.1", "RB 1-1", 880, 1100.0), ("bank", "2.2", "RB 2-2", 590, 790.0),
        ("outlet", "1.1.1", "p1-a", 400, 500.0), ("outlet", "1.1.2", "p1-b", 300, 400.0),
        ("outlet", "1.1.3", "p1-c", 180, 200.0), ("outlet", "2.2.1", "p2-a", 350, 400.0),
        ("outlet", "2.2.2", "p2-b", 240, 390.0)]),
    # CPQPOWER-MIB mpdu, two cores: core totals W; outputs {core}.{output}
    # W and Wh.
    "hpe-ipdu-cores": ("HPE", [
        ("device", 1, "core-A", 1800, None), ("device", 2, "core-B", 1200, None),
        ("bank", "1.1", "", 612, 123.456), ("bank", "1.2", "", 568, 99.0),
        ("bank", "1.3", "", 524, 45.0), ("bank", "2.1", "", 583, 80.0),
        ("bank", "2.2", "", 540, 76.0),
        # smart extension bar outlets {core}.{output}.{outlet}: 0.1 V,
        # 0.01 A, W, Wh, named by the server found behind them
        ("outlet", "1.1.1", "dl380-a", 262, 5.0), ("outlet", "1.1.2", "dl380-b", 240, 4.0),
        ("outlet", "2.1.1", "apollo-1", 327, 7.0)]),
    # PM-MIB: W x 10, Wh; PDUs {port}.{pdu}, outlets {port}.{pdu}.{outlet}.
    "avocent-pm": ("Avocent/Vertiv", [
        ("inlet", "1.1", "PM3024-A", 1140, 250.0), ("inlet", "1.2", "PM3024-B", 680, 120.0),
        ("phase", "1.1.1", "X", 1140, None), ("phase", "1.2.1", "X", 680, None),
        ("outlet", "1.1.1", "db-1", 437, 90.0), ("outlet", "1.1.2", "db-2", 393, 80.0),
        ("outlet", "1.1.3", "db-3", 306, 70.0), ("outlet", "1.2.1", "web-1", 264, 50.0),
        ("outlet", "1.2.2", "web-2", 220, 40.0), ("outlet", "1.2.3", "web-3", 0, 30.0)]),
    # IBM-PDU-MIB (2012): phase and outlet last power readings in W.
    "ibm-pdu": ("IBM/Lenovo", [
        ("phase", 1, "", 1466, None), ("outlet", 1, "n01", 412, None),
        ("outlet", 2, "n02", 377, None), ("outlet", 3, "n03", 344, None),
        ("outlet", 4, "sw1", 58, None), ("outlet", 5, "n04", 270, None),
        ("outlet", 6, "spare", 0, None)]),
    # Eaton nLogic (per NUT's eaton-pdu-nlogic-mib.c): W and VA whole,
    # 0.01 A; two PDUs of a chain, phantom phase rows 2-3 cut by the count.
    "eaton-nlogic": ("Eaton", [
        ("device", 1, "rack4-A", 1150, None), ("device", 2, "rack4-B", 480, None),
        ("phase", "1.1", "", 1150, None), ("phase", "2.1", "", 480, None),
        ("outlet", "1.1", "n1", 330, None), ("outlet", "1.2", "n2", 264, None),
        ("outlet", "1.3", "n3", 220, None), ("outlet", "1.4", "n4", 197, None),
        ("outlet", "1.5", "n5", 131, None), ("outlet", "1.6", "n6", 0, None),
        ("outlet", "2.1", "m1", 219, None), ("outlet", "2.2", "m2", 175, None),
        ("outlet", "2.3", "m3", 85, None)]),
    # PowerNet-MIB rPDU2, host + one guest numbered over the chain: device
    # hundredths of kW, 0.1 kWh; banks current only (0.1 A x phase 1's V,
    # estimated); outlets W, 0.1 kWh, the guest's after the host's.
    "apc-rpdu2-guest": ("APC/Schneider", [
        ("device", 1, "", 550, 1234.5), ("device", 2, "", 420, 500.0),
        ("phase", 1, "", 550, None), ("phase", 2, "", 420, None),
        ("bank", 1, "", 552, None, "estimated"), ("bank", 2, "", 437, None, "estimated"),
        ("outlet", 1, "h-1", 200, 10.0), ("outlet", 2, "h-2", 150, 20.0),
        ("outlet", 3, "h-3", 100, 30.0), ("outlet", 4, "h-4", 80, 40.0),
        ("outlet", 5, "g-1", 150, 5.0), ("outlet", 6, "g-2", 120, 6.0),
        ("outlet", 7, "g-3", 90, 7.0), ("outlet", 8, "g-4", 50, 8.0)]),
}

# Walks named after what they show, not their profile.
PROFILE_OF = {"liebert-mph2-chain": "liebert-mph2", "hpe-ipdu-cores": "hpe-ipdu",
              "apc-rpdu2-guest": "apc-rpdu2"}

def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)

fail = 0
for prof, (vendor, total, outlets) in EXPECT.items():
    j = json.load(open(f"{D}/{prof}.json"))
    errs = []
    if j["profile"] != ("generic" if prof == "generic-acme" else prof):
        errs.append(f"profile {j['profile']}")
    named = prof == "generic-acme"  # never auto-matched
    if not named and "its tables answer" not in j["profile_reason"]:
        errs.append("profile not chosen by sysObjectID and its tables")
    if j["vendor"] != vendor:
        errs.append(f"vendor {j['vendor']}")
    if (total is None) != (j["total_watts"] is None) or (total is not None and not close(total, j["total_watts"])):
        errs.append(f"total {j['total_watts']}")
    if len(j["outlets"]) != len(outlets):
        errs.append(f"{len(j['outlets'])} outlets, want {len(outlets)}")
    for i, (o, (name, w, kwh)) in enumerate(zip(j["outlets"], outlets)):
        if o["index"] != i + 1 or o["name"] != name or not o["ok"] or not close(o["watts"], w):
            errs.append(f"outlet {i+1}: {o}")
        if (kwh is None) != (o["energy_kwh"] is None) or (kwh is not None and not close(o["energy_kwh"], kwh)):
            errs.append(f"outlet {i+1} energy {o['energy_kwh']} want {kwh}")
    print(f"{prof}: {'ok' if not errs else errs}")
    fail += bool(errs)
for prof, (vendor, rows) in SYNTHETIC.items():
    j = json.load(open(f"{D}/{prof}.json"))
    errs = []
    want = PROFILE_OF.get(prof, prof)
    by_tables = "its tables answer" in j["profile_reason"] or \
        "found by its tables" in j["profile_reason"]
    if j["profile"] != want or j["vendor"] != vendor or not by_tables:
        errs.append(f"profile {j['profile']} ({j['profile_reason']}), vendor {j['vendor']}")
    got = {(r["level"], f"{r['unit']}.{r['index']}" if r.get("unit") else r["index"]): r
           for r in j["rows"]}
    if sorted(got, key=str) != sorted(((lv, i) for lv, i, *_ in rows), key=str):
        errs.append(f"rows {sorted(got)}")
    for lv, i, name, w, kwh, *src in rows:
        r = got.get((lv, i))
        e = r and r["energy_kwh"]
        if r is None or r["name"] != name or r["power_from"] != (src or ["measured"])[0] or \
                not close(r["watts"], w) or (kwh is None) != (e is None) or \
                (kwh is not None and not close(e, kwh)):
            errs.append(f"{lv} {i}: {r and (r['name'], r['watts'], r['energy_kwh'])}, want "
                        f"{(name, w, kwh)}")
    print(f"{prof} (synthetic walk from its MIB): {'ok' if not errs else errs}")
    fail += bool(errs)
for line in open(f"{D}/snmpget.txt"):
    prof, raw = line.split()
    idx, field, scale = CROSS[prof]
    got = json.load(open(f"{D}/{prof}.json"))["outlets"][idx - 1][field]
    ok = close(got, int(raw) * scale)
    print(f"snmpget {prof} outlet {idx} {field}: raw {raw} -> {got} {'ok' if ok else 'MISMATCH'}")
    fail += not ok
sys.exit(1 if fail else 0)
