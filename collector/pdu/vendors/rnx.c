// SPDX-License-Identifier: GPL-3.0-or-later
/* Riedo Networks (RNX) UPDU. */
#include "vendors.h"

/* RNX-UPDU-MIB (enterprises.55108.1). All readings are in one table,
 * upduMeterTable ...1.3.1.1, index {upduModuleIndex (0..8)}.{upduMeterIndex
 * (0..11)}: .2 upduMeterName, .3 upduMeterType, .4 upduMeterEnergyP (Wh,
 * Counter64), .7 upduMeterPowerP (W), .9 upduMeterPowerS (VA), .10
 * upduMeterUrms (mV), .11 upduMeterIrms (mA). upduMeterType says what a
 * row meters: pduTotal(0), pduTotalCalc(1), phaseTotal(2),
 * phaseTotalCalc(3), moduleTotal(4), moduleTotalCalc(5), outlet(6),
 * outletGroup(7) (the *Calc totals are sums of the meters below them).
 * The levels below filter on that type. Meter numbers are 0-based.
 * The module arc is fixed, and the MIB does not say which module holds
 * which meters; assumed (no recording to check): module 0 (the control
 * module, listed first in upduModuleTable) carries the measured PDU and
 * phase totals, module 1 the first power outlet module, whose outlets are
 * the only ones this profile reaches. A unit that only has calculated
 * totals (pduTotalCalc / phaseTotalCalc) shows no device or phase rows.
 * upduInfoPartNumber ...1.1.1.0 is the model. */
#define RNX1 "1.3.6.1.4.1.55108.1"
#define RNX_METER(col, mod) RNX1 ".3.1.1." #col "." #mod ".%d"
/* The rows of module mod whose upduMeterType is type. */
#define RNX_LEVEL(mod, type)                                                                       \
  {                                                                                                \
    .NAME = {RNX_METER(2, mod)}, .POWER = {RNX_METER(7, mod), 1.0},                                \
    .VA = {RNX_METER(9, mod), 1.0}, .CURRENT = {RNX_METER(11, mod), 0.001},                        \
    .VOLTAGE = {RNX_METER(10, mod), 0.001}, .ENERGY = {RNX_METER(4, mod), WH},                     \
    .filter = RNX_METER(3, mod), .filter_value = type                                              \
  }
static const struct erg_snmp_profile rnx_updu = {
    .name = "rnx-updu",
    .vendor = "Riedo Networks (RNX)",
    .mib = "RNX-UPDU-MIB",
    .sysoids = {"1.3.6.1.4.1.55108"},
    .oid_model = RNX1 ".1.1.0",
    .DEVICE = RNX_LEVEL(0, 0),
    .PHASE = RNX_LEVEL(0, 2),
    .OUTLET = RNX_LEVEL(1, 6),
};

ERG_VENDOR_PROFILES(rnx, &rnx_updu);
