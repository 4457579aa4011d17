// SPDX-License-Identifier: GPL-3.0-or-later
/* Powertek PDUs. */
#include "vendors.h"

/* PWTv1-MIB (PWT_3Phase_MIBv1 v2.10), pwt = enterprises.42610.1.4.4, the
 * objects under pduObjects ...4.4.1. Scalars are SMIv1 ("...0").
 * INLET   pduPwrMonitoringInletStatusEntry ...1.6.1.2.1.{col}.{inlet}: .2
 *         inletPowerAll (0.1 W, "the total power of inlet"), .4 inletEnergy
 *         (kWh); count pduPwrMonitoringInletNum ...1.6.1.1.0. The per-phase
 *         and per-bank values (.6-.44: phase1b1 ... phase3) are columns of
 *         the inlet's one row: not levels here.
 * OUTLET  the outlets of "PduA", the first PDU of the chain (PduB-PduH
 *         have the same tables at ...6.2.2 to ...6.2.8),
 *         pduPwrMonitoringOutletStatusPduAEntry ...1.6.2.1.2.1.{col}.{outlet}:
 *         .3 Current (0.01 A), .4 PwrFactor (0.1 %), .5 Power (0.1 W), .6
 *         Energy (kWh), .9 AppPower (apparent power; the MIB writes its unit
 *         "0.1W": 0.1 VA), .10 Voltage (0.1 V); names outletCfgPduAName
 *         ...1.6.2.1.3.1.2.{outlet}; count pduPwrMonitoringOutletNumPduA
 *         ...1.6.2.1.1.0.
 * The sysObjectID is not given by the MIB: the enterprise arc is the hint.
 * No recording checks it: from the MIB only. */
#define PWT "1.3.6.1.4.1.42610.1.4.4.1.6"
static const struct erg_snmp_profile powertek_pwt = {
    .name = "powertek-pwt",
    .vendor = "Powertek",
    .mib = "PWTv1-MIB",
    .sysoids = {"1.3.6.1.4.1.42610"},
    .INLET = {.POWER = {PWT ".1.2.1.2.%d", 0.1},
              .ENERGY = {PWT ".1.2.1.4.%d", KWH},
              .count = PWT ".1.1.0"},
    .OUTLET = {.NAME = {PWT ".2.1.3.1.2.%d"},
               .POWER = {PWT ".2.1.2.1.5.%d", 0.1},
               .VA = {PWT ".2.1.2.1.9.%d", 0.1},
               .PF = {PWT ".2.1.2.1.4.%d", 0.001},
               .CURRENT = {PWT ".2.1.2.1.3.%d", 0.01},
               .VOLTAGE = {PWT ".2.1.2.1.10.%d", 0.1},
               .ENERGY = {PWT ".2.1.2.1.6.%d", KWH},
               .count = PWT ".2.1.1.0"},
};

ERG_VENDOR_PROFILES(powertek, &powertek_pwt);
