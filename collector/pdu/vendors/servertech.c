// SPDX-License-Identifier: GPL-3.0-or-later
/* Server Technology (Legrand): Sentry PDUs. */
#include "vendors.h"

/* Sentry4-MIB (PRO1/PRO2 "Smart"/"Switched" PDUs; enterprises.1718.4.1).
 * Every table is indexed from the unit (1 = master "A", 2.. = link units)
 * and the input cord (1 = cord "A", 2 = "B"): "*" arcs, every unit's and
 * cord's rows read (an inlet is {unit}.{cord}: "inlet:1.2" is cord B of
 * the master; an outlet {unit}.{cord}.{outlet}: "outlet:1.2.5"). Units as the MIB's UNITS: W, VA,
 * PF in hundredths, A in hundredths, V in tenths, energy in tenths of kWh
 * (cord, phase) or Wh (outlet). -1 means not available.
 * INLET   st4InputCordMonitorTable ...3.3.1, index {unit}.{cord}: .3
 *   ActivePower (W), .5 ApparentPower (VA), .8 PowerFactor (0.01), .10
 *   Energy (0.1 kWh); st4InputCordName ...3.2.1.3; st4UnitInputCordCount
 *   ...2.2.1.30.{unit}. No cord current/voltage (they are per line/phase).
 * PHASE   st4PhaseMonitorTable ...5.3.1, index {unit}.{cord}.{phase}: .3
 *   Voltage (0.1 V), .6 Current (0.01 A), .8 ActivePower (W), .9
 *   ApparentPower (VA), .10 PowerFactor (0.01), .13 Energy (0.1 kWh);
 *   st4PhaseLabel ...5.2.1.4 ("AA:L1-N", "AA:L1-L2"); st4InputCordPhaseCount
 *   ...3.2.1.21.{unit}.{cord}. Sentry "phases" are the load circuits of the
 *   cord (L1-N.. on wye, L1-L2.. on delta), the level that carries power;
 *   st4LineMonitorTable (...4.3.1.3 st4LineCurrent, the current on each
 *   input wire incl. neutral, no power) is not used.
 * BANK    st4BranchMonitorTable ...7.3.1, index {unit}.{cord}.{branch}: .3
 *   Current (0.01 A) only; st4BranchLabel ...7.2.1.4;
 *   st4InputCordBranchCount ...3.2.1.23.{unit}.{cord}.
 * OUTLET  st4OutletMonitorTable ...8.3.1, index {unit}.{cord}.{outlet}: .3
 *   Current (0.01 A), .6 Voltage (0.1 V), .7 ActivePower (W), .9
 *   ApparentPower (VA), .10 PowerFactor (0.01), .14 Energy (Wh);
 *   st4OutletName ...8.2.1.3; st4InputCordOutletCount ...3.2.1.24.
 * st4UnitModel ...2.2.1.5.{unit}. */
#define S4 "1.3.6.1.4.1.1718.4.1"
static const struct erg_snmp_profile servertech_sentry4 = {
    .name = "servertech-sentry4",
    .vendor = "Server Technology",
    .mib = "Sentry4-MIB",
    .sysoids = {"1.3.6.1.4.1.1718.4"},
    .oid_model = S4 ".2.2.1.5.1",
    .INLET = {.NAME = {S4 ".3.2.1.3.*.%d"},
              .POWER = {S4 ".3.3.1.3.*.%d", 1.0},
              .VA = {S4 ".3.3.1.5.*.%d", 1.0},
              .PF = {S4 ".3.3.1.8.*.%d", 0.01},
              .ENERGY = {S4 ".3.3.1.10.*.%d", KWH_TENTH},
              .count = S4 ".2.2.1.30.*"},
    .PHASE = {.NAME = {S4 ".5.2.1.4.*.*.%d"},
              .POWER = {S4 ".5.3.1.8.*.*.%d", 1.0},
              .VA = {S4 ".5.3.1.9.*.*.%d", 1.0},
              .PF = {S4 ".5.3.1.10.*.*.%d", 0.01},
              .CURRENT = {S4 ".5.3.1.6.*.*.%d", 0.01},
              .VOLTAGE = {S4 ".5.3.1.3.*.*.%d", 0.1},
              .ENERGY = {S4 ".5.3.1.13.*.*.%d", KWH_TENTH},
              .count = S4 ".3.2.1.21.*.*"},
    .BANK = {.NAME = {S4 ".7.2.1.4.*.*.%d"},
             .CURRENT = {S4 ".7.3.1.3.*.*.%d", 0.01},
             .count = S4 ".3.2.1.23.*.*"},
    .OUTLET = {.NAME = {S4 ".8.2.1.3.*.*.%d"},
               .POWER = {S4 ".8.3.1.7.*.*.%d", 1.0},
               .VA = {S4 ".8.3.1.9.*.*.%d", 1.0},
               .PF = {S4 ".8.3.1.10.*.*.%d", 0.01},
               .CURRENT = {S4 ".8.3.1.3.*.*.%d", 0.01},
               .VOLTAGE = {S4 ".8.3.1.6.*.*.%d", 0.1},
               .ENERGY = {S4 ".8.3.1.14.*.*.%d", WH},
               .count = S4 ".3.2.1.24.*.*"},
};

/* Sentry3-MIB (CDU, "Sentry Switched/Smart CDU"; enterprises.1718.3.2).
 * Tables are indexed from the tower (1 = master "A", 2.. = link towers)
 * and the input feed: "*" arcs, every tower's rows read ("outlet:2.1.5"). -1 means
 * not available. Power columns (infeedPower, outlet power...) exist only on
 * units with power sensing (PIPS/POPS hardware); older CDUs give infeed
 * current and voltage only (the driver then estimates A x V x pf).
 * DEVICE  each tower (device 2 is link tower "B"), towerTable ...3.2.1.1,
 *   index {tower}: .11
 *   towerActivePower (W), .12 towerApparentPower (VA), .13 towerPowerFactor
 *   (0.01), .14 towerEnergy (kWh). systemTotalPower ...3.1.6.0 (W, all
 *   towers) is not used.
 * INLET   infeedTable ...3.2.2.1, index {tower}.{infeed}: .3 infeedName, .7
 *   infeedLoadValue (0.01 A, line current), .11 infeedVoltage (0.1 V,
 *   line-to-line), .12 infeedPower (W), .13 infeedApparentPower (VA), .14
 *   infeedPowerFactor (0.01), .16 infeedEnergy (0.1 kWh); towerInfeedCount
 *   ...3.2.1.1.5.{tower}. On a 3-phase tower each infeed is one phase
 *   (AA/AB/AC = X/Y/Z): the "inlets" are then phases; A x V of a delta
 *   infeed overstates its power by up to sqrt(3) when no infeedPower is
 *   given (infeedPhaseCurrent .19 / infeedPhaseVoltage .18 would be
 *   consistent but are rarely present).
 * BANK    branchTable ...3.2.7.1, index {tower}.{infeed}.{branch}: .3
 *   branchName, .7 branchLoadValue (0.01 A) (branches of infeed 1).
 * OUTLET  outletTable ...3.2.3.1, index {tower}.{infeed}.{outlet}: .3
 *   outletName, .7 outletLoadValue (0.01 A), .13 outletVoltage (0.1 V), .14
 *   outletPower (W), .15 outletApparentPower (VA), .16 outletPowerFactor
 *   (0.01), .18 outletEnergy (Wh); infeedOutletCount ...3.2.2.1.9. Outlets
 *   of infeed 1 only (3-phase towers spread outlets over infeeds).
 * towerModelNumber ...3.2.1.1.7.{tower}. */
#define S3 "1.3.6.1.4.1.1718.3.2"
static const struct erg_snmp_profile servertech_sentry3 = {
    .name = "servertech-sentry3",
    .vendor = "Server Technology",
    .mib = "Sentry3-MIB",
    .sysoids = {"1.3.6.1.4.1.1718.3"},
    .oid_model = S3 ".1.1.7.1",
    .DEVICE = {.POWER = {S3 ".1.1.11.%d", 1.0},
               .VA = {S3 ".1.1.12.%d", 1.0},
               .PF = {S3 ".1.1.13.%d", 0.01},
               .ENERGY = {S3 ".1.1.14.%d", KWH}},
    .INLET = {.NAME = {S3 ".2.1.3.*.%d"},
              .POWER = {S3 ".2.1.12.*.%d", 1.0},
              .VA = {S3 ".2.1.13.*.%d", 1.0},
              .PF = {S3 ".2.1.14.*.%d", 0.01},
              .CURRENT = {S3 ".2.1.7.*.%d", 0.01},
              .VOLTAGE = {S3 ".2.1.11.*.%d", 0.1},
              .ENERGY = {S3 ".2.1.16.*.%d", KWH_TENTH},
              .count = S3 ".1.1.5.*"},
    .BANK = {.NAME = {S3 ".7.1.3.*.*.%d"}, .CURRENT = {S3 ".7.1.7.*.*.%d", 0.01}},
    .OUTLET = {.NAME = {S3 ".3.1.3.*.*.%d"},
               .POWER = {S3 ".3.1.14.*.*.%d", 1.0},
               .VA = {S3 ".3.1.15.*.*.%d", 1.0},
               .PF = {S3 ".3.1.16.*.*.%d", 0.01},
               .CURRENT = {S3 ".3.1.7.*.*.%d", 0.01},
               .VOLTAGE = {S3 ".3.1.13.*.*.%d", 0.1},
               .ENERGY = {S3 ".3.1.18.*.*.%d", WH},
               .count = S3 ".2.1.9.*.*"},
};

ERG_VENDOR_PROFILES(servertech, &servertech_sentry4, &servertech_sentry3);
