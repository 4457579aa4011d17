// SPDX-License-Identifier: GPL-3.0-or-later
/* Eaton ePDUs. */
#include "vendors.h"

/* EATON-EPDU-MIB (G2 "Marlin" / G3 "Shark" ePDUs MA/MI/MO/SW;
 * enterprises.534.6.6.7). Every table starts with strappingIndex (the
 * daisy-chain position; 0 = the master unit, 1.. the members): a "*" arc,
 * every unit's rows read ("outlet:1.5" is outlet 5 of the first member).
 * Units: mA, mV, W, VA, Wh, PF in thousandths; a negative power value
 * means not available (G3 also reports a negative PF for a leading load,
 * which then reads as not available too).
 * INLET   inputTotalPowerTable ...7.3.5.1, index {strap}.{input}: .3
 *   inputTotalVA, .4 inputTotalWatts, .5 inputTotalWh, .7
 *   inputTotalPowerFactor (0.001) (G3; G2 firmware lacks this table and
 *   gives totals as row 4 of inputPowerTable). Current and voltage are
 *   per wire: inputCurrentTable ...7.3.3.1.4.{strap}.{input}.1 and
 *   inputVoltageTable ...7.3.2.1.3.{strap}.{input}.1 (first measurement:
 *   the single phase, or L1 of a 3-phase input). inputFeedName
 *   ...7.3.1.1.10; inputCount ...7.1.2.1.20.{strap}.
 * PHASE   the rows of input 1: inputPowerTable ...7.3.4.1, index
 *   {strap}.{input}.{inputPowerIndex}: .3 inputVA, .4 inputWatts, .5
 *   inputWh, .7 inputPowerFactor; inputCurrentTable ...7.3.3.1.4 (mA) and
 *   inputVoltageTable ...7.3.2.1.3 (mV) rows 1..3. Rows 1..3 are phase1..3
 *   (inputPowerMeasType / inputCurrentMeasType / inputVoltageMeasType say
 *   so; a 4th power row is the total, a 4th current row the neutral): max
 *   3. inputPhaseDesignator ...7.3.3.1.12 ("L1"); inputPowerCount
 *   ...7.3.1.1.7.{strap}.{input}.
 * BANK    groups (breakers, outlet sections, user groups), index
 *   {strap}.{groupIndex}: groupName ...7.5.1.1.3, groupCurrent ...7.5.4.1.3
 *   (mA), groupVoltage ...7.5.3.1.3 (mV), groupPowerTable ...7.5.5.1: .2
 *   groupVA, .3 groupWatts, .4 groupWh, .6 groupPowerFactor (0.001);
 *   groupCount ...7.1.2.1.21.{strap}.
 * OUTLET  index {strap}.{outletIndex}: outletName ...7.6.1.1.3,
 *   outletCurrent ...7.6.4.1.3 (mA), outletVoltage ...7.6.3.1.2 (mV),
 *   outletPowerTable ...7.6.5.1: .2 outletVA, .3 outletWatts, .4 outletWh,
 *   .6 outletPowerFactor (0.001); outletCount ...7.1.2.1.22.{strap}.
 * Model: partNumber ...7.1.2.1.3.{strap} ("EMA114-10"; productName .2 is
 * missing on some firmware). */
#define EP "1.3.6.1.4.1.534.6.6.7"
static const struct erg_snmp_profile eaton_epdu = {
    .name = "eaton-epdu",
    .vendor = "Eaton",
    .mib = "EATON-EPDU-MIB",
    .sysoids = {EP},
    .oid_model = EP ".1.2.1.3.0",
    .INLET = {.NAME = {EP ".3.1.1.10.*.%d"},
              .POWER = {EP ".3.5.1.4.*.%d", 1.0},
              .VA = {EP ".3.5.1.3.*.%d", 1.0},
              .PF = {EP ".3.5.1.7.*.%d", 0.001},
              .CURRENT = {EP ".3.3.1.4.*.%d.1", 0.001},
              .VOLTAGE = {EP ".3.2.1.3.*.%d.1", 0.001},
              .ENERGY = {EP ".3.5.1.5.*.%d", WH},
              .count = EP ".1.2.1.20.*"},
    .PHASE = {.POWER = {EP ".3.4.1.4.*.1.%d", 1.0},
              .VA = {EP ".3.4.1.3.*.1.%d", 1.0},
              .PF = {EP ".3.4.1.7.*.1.%d", 0.001},
              .CURRENT = {EP ".3.3.1.4.*.1.%d", 0.001},
              .VOLTAGE = {EP ".3.2.1.3.*.1.%d", 0.001},
              .ENERGY = {EP ".3.4.1.5.*.1.%d", WH},
              .count = EP ".3.1.1.7.*.1",
              .max = 3},
    .BANK = {.NAME = {EP ".5.1.1.3.*.%d"},
             .POWER = {EP ".5.5.1.3.*.%d", 1.0},
             .VA = {EP ".5.5.1.2.*.%d", 1.0},
             .PF = {EP ".5.5.1.6.*.%d", 0.001},
             .CURRENT = {EP ".5.4.1.3.*.%d", 0.001},
             .VOLTAGE = {EP ".5.3.1.3.*.%d", 0.001},
             .ENERGY = {EP ".5.5.1.4.*.%d", WH},
             .count = EP ".1.2.1.21.*"},
    .OUTLET = {.NAME = {EP ".6.1.1.3.*.%d"},
               .POWER = {EP ".6.5.1.3.*.%d", 1.0},
               .VA = {EP ".6.5.1.2.*.%d", 1.0},
               .PF = {EP ".6.5.1.6.*.%d", 0.001},
               .CURRENT = {EP ".6.4.1.3.*.%d", 0.001},
               .VOLTAGE = {EP ".6.3.1.2.*.%d", 0.001},
               .ENERGY = {EP ".6.5.1.4.*.%d", WH},
               .count = EP ".1.2.1.22.*"},
};

/* EATON-EPDU-MA-MIB (G1 managed ePDUs built by Aphel, formerly "PDU-MIB";
 * enterprises.534.6.6.6, module eatonEpduMa). Scalars and one outlet table;
 * units mA, mV, W, VA, PF in percent; no energy.
 * DEVICE  unitReadings ...6.1.3.1: .1 unitCurrent (mA), .2 unitVoltage
 *   (mV), .3 unitActivePower, .4 unitApparentPower (the MIB's DESCRIPTION
 *   of .3 says "volt-amps", a copy slip: it is the active power in W, as in
 *   the Raritan-derived PDU-MIB it comes from).
 * OUTLET  outletTable ...6.1.2.2.1, index outletIndex: .2 outletLabel, .4
 *   outletCurrent (mA), .6 outletVoltage (mV), .7 outletActivePower (W), .8
 *   outletApparentPower (VA), .9 outletPowerFactor (%); outletCount
 *   ...6.1.2.1.0.
 * The three breaker currents unitCircuitBreak{0,1,2}Current (...6.1.3.1.40
 *   to .42) are separate scalars, not a table: no BANK level.
 * objectName ...6.1.1.12.0 is "the model type of the device". The older
 * Aphel PDU-MIB (enterprises.13742.2, a number that belongs to Raritan)
 * keeps readings in a sensor table reached through per-outlet sensor
 * numbers, which a template cannot follow. */
#define EMA "1.3.6.1.4.1.534.6.6.6.1"
static const struct erg_snmp_profile eaton_epdu_ma = {
    .name = "eaton-epdu-ma",
    .vendor = "Eaton",
    .mib = "EATON-EPDU-MA-MIB",
    .sysoids = {"1.3.6.1.4.1.534.6.6.6"},
    .oid_model = EMA ".1.12.0",
    .DEVICE = {.POWER = {EMA ".3.1.3.0", 1.0},
               .VA = {EMA ".3.1.4.0", 1.0},
               .CURRENT = {EMA ".3.1.1.0", 0.001},
               .VOLTAGE = {EMA ".3.1.2.0", 0.001}},
    .OUTLET = {.NAME = {EMA ".2.2.1.2.%d"},
               .POWER = {EMA ".2.2.1.7.%d", 1.0},
               .VA = {EMA ".2.2.1.8.%d", 1.0},
               .PF = {EMA ".2.2.1.9.%d", 0.01},
               .CURRENT = {EMA ".2.2.1.4.%d", 0.001},
               .VOLTAGE = {EMA ".2.2.1.6.%d", 0.001},
               .count = EMA ".2.1.0"},
};

ERG_VENDOR_PROFILES(eaton, &eaton_epdu, &eaton_epdu_ma);
