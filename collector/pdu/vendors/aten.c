// SPDX-License-Identifier: GPL-3.0-or-later
/* ATEN (eco PDU, PE series). */
#include "vendors.h"

/* ATEN-PE-CFG (pe = enterprises.21317.1.3.2.2; control = pe.2: device .1,
 * outlet .2, bank .3). The readings are the "integer value" tables, each
 * value 1000 times the displayed one: current mA, voltage mV, power mW,
 * power dissipation (energy) Wh (displayed in kWh); -1000000 not available,
 * -2000000 not supported (negative: the driver reads "not available").
 *   deviceIntegerValueEntry ...2.1.99.1 (index 1): .2 Current, .3 Voltage,
 *     .4 Power, .5 PowerDissipation; deviceName ...2.1.2.0, modelName
 *     ...2.1.1.0, outletnumber ...2.1.13.0, banknumber ...2.1.14.0.
 *   bankIntegerValueEntry ...2.3.99.1.{col}.{bank}: same columns;
 *     bankName ...2.3.3.1.2.{bank}.
 *   outletIntegerValueEntry ...2.2.99.1.{col}.{outlet}: same columns;
 *     outletName ...2.2.10.1.2.{outlet} ("N/A" where unsupported).
 * The power factors (device/outlet/bankPowerFactor) and the older value
 * tables (...2.2.1.1.2-5 in ATEN-PE-CFG-STR) are DisplayStrings ("0.80",
 * "237.47", "not-support"), not numbers, and are not used. */
#define ATEN "1.3.6.1.4.1.21317.1.3.2.2.2"
#define ATEN_VALUES(tab, row)                                                                      \
  .POWER = {ATEN "." #tab ".99.1.4." row, 0.001},                                                  \
  .CURRENT = {ATEN "." #tab ".99.1.2." row, 0.001},                                                \
  .VOLTAGE = {ATEN "." #tab ".99.1.3." row, 0.001}, .ENERGY = {ATEN "." #tab ".99.1.5." row, WH}
static const struct erg_snmp_profile aten_pe = {
    .name = "aten-pe",
    .vendor = "ATEN",
    .mib = "ATEN-PE-CFG",
    .sysoids = {"1.3.6.1.4.1.21317"},
    .oid_model = ATEN ".1.1.0",
    .DEVICE = {.NAME = {ATEN ".1.2.0"}, ATEN_VALUES(1, "1")},
    .BANK = {.NAME = {ATEN ".3.3.1.2.%d"}, ATEN_VALUES(3, "%d"), .count = ATEN ".1.14.0"},
    .OUTLET = {.NAME = {ATEN ".2.10.1.2.%d"}, ATEN_VALUES(2, "%d"), .count = ATEN ".1.13.0"},
};

ERG_VENDOR_PROFILES(aten, &aten_pe);
