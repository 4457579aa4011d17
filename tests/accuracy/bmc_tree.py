# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes a minimal Redfish recording (DMTF mockup layout, as the real ones
of shared/fixtures/redfish-recordings) of one rack server per chassis id
given, each with a PowerControl like an HPE DL325's, or, for an id given as
ID:sensor, a Sensors collection whose node total is a Sensor with its own
ReadingTime (as an HPE Cray EX blade's), for erg-pdusim --redfish in the
accuracy harness (tests/accuracy/bmc.sh).
usage: bmc_tree.py DIR CHASSIS_ID[:sensor]..."""
import json
import os
import sys


def put(root, path, doc):
    d = os.path.join(root, path.lstrip("/"))
    os.makedirs(d, exist_ok=True)
    doc = {"@odata.id": path, **doc}
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump(doc, f, indent=1)


def main():
    root, args = sys.argv[1], sys.argv[2:]
    ids = [a.split(":")[0] for a in args]
    put(root, "/redfish/v1", {"@odata.type": "#ServiceRoot.v1_5_1.ServiceRoot", "Id": "RootService",
                              "Name": "erg accuracy BMC (simulated)",
                              "Chassis": {"@odata.id": "/redfish/v1/Chassis"},
                              "Links": {"Sessions": {
                                  "@odata.id": "/redfish/v1/SessionService/Sessions"}}})
    put(root, "/redfish/v1/Chassis", {
        "@odata.type": "#ChassisCollection.ChassisCollection", "Name": "Chassis",
        "Members": [{"@odata.id": f"/redfish/v1/Chassis/{i}"} for i in ids],
        "Members@odata.count": len(ids)})
    for a in args:
        i, sensor = a.split(":")[0], a.endswith(":sensor")
        c = f"/redfish/v1/Chassis/{i}"
        link = {"Sensors": {"@odata.id": f"{c}/Sensors"}} if sensor else {
            "Power": {"@odata.id": f"{c}/Power"}}
        put(root, c, {"@odata.type": "#Chassis.v1_10_2.Chassis", "Id": i, "Name": f"node {i}",
                      "ChassisType": "RackMount", **link})
        if sensor:
            s = f"{c}/Sensors/TotalPower"
            put(root, f"{c}/Sensors", {
                "@odata.type": "#SensorCollection.SensorCollection", "Name": "Sensors",
                "Members": [{"@odata.id": s}], "Members@odata.count": 1})
            put(root, s, {"@odata.type": "#Sensor.v1_2_0.Sensor", "Id": "TotalPower",
                          "Name": "Total Power", "ReadingType": "Power", "ReadingUnits": "W",
                          "PhysicalContext": "Chassis", "Reading": 100,
                          "ReadingTime": "2020-01-01T00:00:00+00:00"})
            continue
        put(root, f"{c}/Power", {
            "@odata.type": "#Power.v1_3_0.Power", "Id": "Power", "Name": "PowerMetrics",
            "PowerControl": [{"@odata.id": f"{c}/Power#PowerControl/0", "MemberId": "0",
                              "Name": "Server Power Control", "PowerCapacityWatts": 1000,
                              "PowerConsumedWatts": 100}]})

if __name__ == "__main__":
    main()
