// SPDX-License-Identifier: GPL-3.0-or-later
/* Schleifenbauer. */
#include "vendors.h"

/* SCHLEIFENBAUER-DATABUS-MIB (schleifenbauerMgmt = enterprises.31034.12;
 * sdbDevice = 31034.12.1.1.2). Every table is indexed {sdbDevIdIndex}.{n}:
 * sdbDevIdIndex is the databus unit address of the PDU (one agent may
 * front a whole databus chain, addresses such as 1 and 210): a "*" arc,
 * every unit's rows read ("outlet:210.5"). Units: CentiAmpere, CentiVolt (0.01), CentiPercent power
 * factor (0..10000 = 0..100 %), VA and W as integers, kWh. sdbDevCfEntry ...2.1.1: .1
 * sdbDevCfPhases, .2 OutletsTotal, .7 Branches, .10 Totals (row counts); sdbDevIdProductId
 * ...1.1.1.5. Totals (sdbDevTotalsEntry ...11.1.1; one row per wiring-configuration total, i.e. per
 * feed): .2 KWhTotal (kWh), .3 PowerFactor (0.01 %), .4 ActualCurrent (0.01 A), .6 PowerVoltAmpere
 * (VA), .7 PowerWatt (W); no voltage of its own. -> INLET. Inputs (sdbDevInEntry ...6.1.1; "inputs
 * or phases", 1..sdbDevCfPhases): .2 KWhTotal (kWh), .4 PowerFactor, .5 ActualCurrent, .7
 * ActualVoltage, .9 PowerVoltAmpere (VA), .10 PowerWatt (W), .13 Name. -> PHASE. Branches
 * (sdbDevBranchEntry ...10.1.1): same columns as inputs. -> BANK. Outlets: sdbDevOutName ...7.1.1.2
 * (every outlet, sdbDevCfOutletsTotal
 *   ...2.1.1.2 of them); metering in sdbDevOutMtEntry ...7.2.1 (metered
 *   outlets only, numbered as the outlets): .2 KWhTotal (kWh),
 *   .4 PowerFactor, .5 ActualCurrent, .7 ActualVoltage, .10 PowerVoltAmpere
 *   (VA), .11 PowerWatt (W). Rows come from the name column, present on
 *   every firmware, so unmetered outlets are rows without readings.
 * Older firmware (the DPM27e recording) lacks the PowerWatt columns (and
 * the totals table): power then comes from VA x PF (PF = W / VA). */
#define SDB "1.3.6.1.4.1.31034.12.1.1.2"
#define SDB_CF(col) SDB ".2.1.1." #col ".*"
/* Input, branch: {table}.1.{col}.1.{n}. */
#define SDB_IB(tab, cnt)                                                                           \
  {                                                                                                \
    .NAME = {SDB "." #tab ".1.1.13.*.%d"}, .POWER = {SDB "." #tab ".1.1.10.*.%d", 1.0},            \
    .VA = {SDB "." #tab ".1.1.9.*.%d", 1.0}, .PF = {SDB "." #tab ".1.1.4.*.%d", 1e-4},             \
    .CURRENT = {SDB "." #tab ".1.1.5.*.%d", 0.01}, .VOLTAGE = {SDB "." #tab ".1.1.7.*.%d", 0.01},  \
    .ENERGY = {SDB "." #tab ".1.1.2.*.%d", KWH}, .count = cnt                                      \
  }
static const struct erg_snmp_profile schleifenbauer_databus = {
    .name = "schleifenbauer-databus",
    .vendor = "Schleifenbauer",
    .mib = "SCHLEIFENBAUER-DATABUS-MIB",
    .sysoids = {"1.3.6.1.4.1.31034"},
    .oid_model = SDB ".1.1.1.5.1",
    .INLET = {.POWER = {SDB ".11.1.1.7.*.%d", 1.0},
              .VA = {SDB ".11.1.1.6.*.%d", 1.0},
              .PF = {SDB ".11.1.1.3.*.%d", 1e-4},
              .CURRENT = {SDB ".11.1.1.4.*.%d", 0.01},
              .ENERGY = {SDB ".11.1.1.2.*.%d", KWH},
              .count = SDB_CF(10)},
    .PHASE = SDB_IB(6, SDB_CF(1)),
    .BANK = SDB_IB(10, SDB_CF(7)),
    .OUTLET = {.NAME = {SDB ".7.1.1.2.*.%d"},
               .POWER = {SDB ".7.2.1.11.*.%d", 1.0},
               .VA = {SDB ".7.2.1.10.*.%d", 1.0},
               .PF = {SDB ".7.2.1.4.*.%d", 1e-4},
               .CURRENT = {SDB ".7.2.1.5.*.%d", 0.01},
               .VOLTAGE = {SDB ".7.2.1.7.*.%d", 0.01},
               .ENERGY = {SDB ".7.2.1.2.*.%d", KWH},
               .count = SDB_CF(2)},
};

ERG_VENDOR_PROFILES(schleifenbauer, &schleifenbauer_databus);
