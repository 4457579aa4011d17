// SPDX-License-Identifier: GPL-3.0-or-later
/* Vertiv: Geist (GEIST-MIB-V3, GEIST-V4-MIB, VERTIV-V5-MIB) and Liebert
 * (LIEBERT-GP-PDU-MIB) rack PDUs. */
#include "vendors.h"

/* VERTIV-V5-MIB (= GEIST-V5-MIB / GEIST-IMD-MIB, same OIDs), imd =
 * enterprises.21239.5.2; pdu = imd.3. Every table has one index of its own
 * (pduMainIndex, pduPhaseIndex, ...), numbered across the whole unit.
 * productModelNumber ...5.2.1.8.0.
 * pduMainEntry ...5.2.3.1.1 (index 1 = this PDU): .3 pduMainName,
 *   .9 pduTotalRealPower (W), .10 pduTotalApparentPower (VA),
 *   .11 pduTotalPowerFactor (%), .12 pduTotalEnergy (Wh).
 * pduPhaseEntry ...5.2.3.2.1: .3 Label, .4 Voltage (0.1 V), .8 Current
 *   (0.01 A), .12 RealPower (W), .13 ApparentPower (VA), .14 PowerFactor
 *   (%), .15 Energy (Wh). On delta units the rows are the line pairs
 *   (Phase AB, BC, CA).
 * pduBreakerEntry ...5.2.3.3.1 (circuits): .3 Label, .4 Current (0.01 A),
 *   .8 Voltage (0.1 V), .12 RealPower (W), .13 ApparentPower (VA),
 *   .14 PowerFactor (%), .15 Energy (Wh); the MIB says all but the current
 *   "may not exist on all platforms".
 * pduOutletMeterEntry ...5.2.3.6.1: .3 Label, .4 Voltage (0.1 V), .8 Current
 *   (0.01 A), .12 RealPower (W), .13 ApparentPower (VA), .14 PowerFactor
 *   (%), .15 Energy (Wh).
 * pduLineEntry ...5.2.3.4.1 gives only the current of each input line
 *   (Line A/B/C), no power: not a level here.
 * sysObjectID: 21239.5.x (older firmware) or the Vertiv "common" identity
 * 21239.42.1.<product> (i03 = 42.1.53 on IMD3 units, r05 = 42.1.15 on
 * R-series). No row-count objects. */
#define G5 "1.3.6.1.4.1.21239.5.2.3"
static const struct erg_snmp_profile geist_v5 = {
    .name = "geist-v5",
    .vendor = "Vertiv/Geist",
    .mib = "VERTIV-V5-MIB",
    .sysoids = {"1.3.6.1.4.1.21239.5.2", "1.3.6.1.4.1.21239.42", "1.3.6.1.4.1.21239.5"},
    .oid_model = "1.3.6.1.4.1.21239.5.2.1.8.0",
    .DEVICE = {.POWER = {G5 ".1.1.9.1", 1.0},
               .VA = {G5 ".1.1.10.1", 1.0},
               .PF = {G5 ".1.1.11.1", 0.01},
               .ENERGY = {G5 ".1.1.12.1", WH}},
    .PHASE = {.NAME = {G5 ".2.1.3.%d"},
              .POWER = {G5 ".2.1.12.%d", 1.0},
              .VA = {G5 ".2.1.13.%d", 1.0},
              .PF = {G5 ".2.1.14.%d", 0.01},
              .CURRENT = {G5 ".2.1.8.%d", 0.01},
              .VOLTAGE = {G5 ".2.1.4.%d", 0.1},
              .ENERGY = {G5 ".2.1.15.%d", WH}},
    .BANK = {.NAME = {G5 ".3.1.3.%d"},
             .POWER = {G5 ".3.1.12.%d", 1.0},
             .VA = {G5 ".3.1.13.%d", 1.0},
             .PF = {G5 ".3.1.14.%d", 0.01},
             .CURRENT = {G5 ".3.1.4.%d", 0.01},
             .VOLTAGE = {G5 ".3.1.8.%d", 0.1},
             .ENERGY = {G5 ".3.1.15.%d", WH}},
    .OUTLET = {.NAME = {G5 ".6.1.3.%d"},
               .POWER = {G5 ".6.1.12.%d", 1.0},
               .VA = {G5 ".6.1.13.%d", 1.0},
               .PF = {G5 ".6.1.14.%d", 0.01},
               .CURRENT = {G5 ".6.1.8.%d", 0.01},
               .VOLTAGE = {G5 ".6.1.4.%d", 0.1},
               .ENERGY = {G5 ".6.1.15.%d", WH}},
};

/* GEIST-V4-MIB: despite its name a Watchdog 100 environmental monitor MIB,
 * blackbird.watchdog100 = enterprises.21239.5.1 (there is no 21239.4 MIB).
 * Its only power data is the Remote Power Manager (RPM) accessory, one row
 * per RPM (an in-line meter feeding two switched outlets), mapped to the
 * outlet level: rpmSensorEntry ...5.1.10.1: .3 Name, .5 Energy (kWh),
 * .6 Voltage (V), .10 Current (0.1 A), .11 RealPower (W), .12 ApparentPower
 * (VA), .13 PowerFactor (%). */
#define G4 "1.3.6.1.4.1.21239.5.1.10.1"
static const struct erg_snmp_profile geist_v4 = {
    .name = "geist-v4",
    .vendor = "Vertiv/Geist",
    .mib = "GEIST-V4-MIB",
    .sysoids = {"1.3.6.1.4.1.21239.5.1"},
    .OUTLET = {.NAME = {G4 ".3.%d"},
               .POWER = {G4 ".11.%d", 1.0},
               .VA = {G4 ".12.%d", 1.0},
               .PF = {G4 ".13.%d", 0.01},
               .CURRENT = {G4 ".10.%d", 0.1},
               .VOLTAGE = {G4 ".6.%d", 1.0},
               .ENERGY = {G4 ".5.%d", KWH}},
};

/* GEIST-MIB-V3 (geistV3 = enterprises.21239.2), firmware-3 Geist PDUs.
 * Phases are columns there (...A, ...B, ...C in one row per unit), not
 * rows, so no phase level can be written; each 3-phase table gives a unit
 * total, read from unit 1. Two table variants, so two profiles (force one
 * with profile= when auto-detection picks the other):
 *  ctrl3ChIECEntry ...2.25.1 (wye/IEC units): .3 Name, .29 kWattHrsTotal
 *   (kWh), .30 RealPowerTotal (W);
 *  ctrl3ChDELTAEntry ...2.6.1 (delta units): .3 Name, .9 kWattHrsTotal
 *   (kWh), .10 RealPowerTotal (W).
 * (ctrl3ChTable ...2.14 has per-phase columns only, no total.)
 * Outlets: ctrlOutletEntry ...2.16.1 (index ctrlOutletIndex): .2 Name,
 *   .6 DeciAmps (0.1 A), .14 kWattHrs (kWh), .15 Power (W);
 *   ctrlOutletCount ...2.1.8.1.16.0. */
#define G3 "1.3.6.1.4.1.21239.2"
#define G3_OUTLETS                                                                                 \
  {                                                                                                \
    .NAME = {G3 ".16.1.2.%d"}, .POWER = {G3 ".16.1.15.%d", 1.0},                                   \
    .CURRENT = {G3 ".16.1.6.%d", 0.1}, .ENERGY = {G3 ".16.1.14.%d", KWH},                          \
    .count = G3 ".1.8.1.16.0"                                                                      \
  }
static const struct erg_snmp_profile geist_v3_iec = {
    .name = "geist-v3-iec",
    .vendor = "Vertiv/Geist",
    .mib = "GEIST-MIB-V3",
    .sysoids = {G3},
    .DEVICE = {.POWER = {G3 ".25.1.30.1", 1.0}, .ENERGY = {G3 ".25.1.29.1", KWH}},
    .OUTLET = G3_OUTLETS,
};
static const struct erg_snmp_profile geist_v3_delta = {
    .name = "geist-v3-delta",
    .vendor = "Vertiv/Geist",
    .mib = "GEIST-MIB-V3",
    .sysoids = {G3},
    .DEVICE = {.POWER = {G3 ".6.1.10.1", 1.0}, .ENERGY = {G3 ".6.1.9.1", KWH}},
    .OUTLET = G3_OUTLETS,
};

/* LIEBERT-GP-PDU-MIB (lgpPdu = enterprises.476.1.42.3.8), MPH2/MPX.
 * Every table's index starts with lgpPduEntryIndex, the PDU (lgpPduTable
 * ...3.8.20.1 has one row per PDU the card manages): a "*" arc, never
 * assumed 1, every PDU's rows read, each row named by its unit
 * ("inlet:2.1" is PDU 2's power source 1).
 * Inlet = power source, lgpPduPsEntry ...3.8.30.20.1, index {pdu}.{ps}:
 *   .50 EnergyAccum (0.1 kWh), .65 PwrTotal (W), .90 ApTotal (VA),
 *   .95 PfTotal (0.01; reads 0 on some cards while W/VA are sane); model
 *   .20 lgpPduPsEntryModel. (Rows are found by PwrTotal: .15
 *   SysAssignLabel, e.g. "PEM: 1-1", is not taken as the name.)
 * Phase = lgpPduPsLineEntry ...3.8.30.40.1, index {pdu}.{ps}.{line}, unit
 *   {pdu}.{ps} ("phase:1.1.2" is line 2 of PDU 1's source 1):
 *   .19 EpLNTenths (0.1 V), .22 EcHundredths (0.01 A), .63 PwrLN (W),
 *   .65 ApLN (VA), .67 PfLN (0.01). The line-to-neutral set: a delta
 *   source without neutral has the line-to-line columns instead (.61
 *   EpLLTenths, .64 PwrLL, .66 ApLL, .68 PfLL), not read here.
 * Bank = receptacle branch, lgpPduRbEntry ...3.8.40.20.1, index
 *   {pdu}.{branch}: .20 SysAssignLabel, .85 EnergyAccum (0.1 kWh),
 *   .100 EpLNTenths (0.1 V), .115 Pwr (W), .120 Ap (VA), .125 Pf (0.01),
 *   .130 EcHundredths (0.01 A). Branch numbers need not start at 1 (an
 *   MPH2 numbers its single branch 2), so no count is given.
 * Outlet = receptacle, lgpPduRcpEntry ...3.8.50.20.1, index
 *   {pdu}.{branch}.{receptacle}, unit {pdu}.{branch} (two "*" arcs: every
 *   branch of every PDU, "outlet:1.2.5" receptacle 5 of PDU 1's branch 2):
 *   .10 UsrLabel, .56 EpTenths (0.1 V), .61 EcHundredths (0.01 A),
 *   .65 PwrOut (W), .70 ApOut (VA), .75 Pf (0.01), .85 EnergyAccum
 *   (0.1 kWh); lgpPduRbEntryRcpCount ...3.8.40.20.1.60.{pdu}.{branch}.
 * Every Liebert card (UPS, cooling, PDU) says 476.1.42: the tables decide. */
#define LGP "1.3.6.1.4.1.476.1.42.3.8"
static const struct erg_snmp_profile liebert_mph2 = {
    .name = "liebert-mph2",
    .vendor = "Vertiv/Liebert",
    .mib = "LIEBERT-GP-PDU-MIB",
    .sysoids = {"1.3.6.1.4.1.476.1.42"},
    .oid_model = LGP ".30.20.1.20.1.1",
    .INLET = {.POWER = {LGP ".30.20.1.65.*.%d", 1.0},
              .VA = {LGP ".30.20.1.90.*.%d", 1.0},
              .PF = {LGP ".30.20.1.95.*.%d", 0.01},
              .ENERGY = {LGP ".30.20.1.50.*.%d", KWH_TENTH}},
    .PHASE = {.POWER = {LGP ".30.40.1.63.*.*.%d", 1.0},
              .VA = {LGP ".30.40.1.65.*.*.%d", 1.0},
              .PF = {LGP ".30.40.1.67.*.*.%d", 0.01},
              .CURRENT = {LGP ".30.40.1.22.*.*.%d", 0.01},
              .VOLTAGE = {LGP ".30.40.1.19.*.*.%d", 0.1}},
    .BANK = {.NAME = {LGP ".40.20.1.20.*.%d"},
             .POWER = {LGP ".40.20.1.115.*.%d", 1.0},
             .VA = {LGP ".40.20.1.120.*.%d", 1.0},
             .PF = {LGP ".40.20.1.125.*.%d", 0.01},
             .CURRENT = {LGP ".40.20.1.130.*.%d", 0.01},
             .VOLTAGE = {LGP ".40.20.1.100.*.%d", 0.1},
             .ENERGY = {LGP ".40.20.1.85.*.%d", KWH_TENTH}},
    .OUTLET = {.NAME = {LGP ".50.20.1.10.*.*.%d"},
               .POWER = {LGP ".50.20.1.65.*.*.%d", 1.0},
               .VA = {LGP ".50.20.1.70.*.*.%d", 1.0},
               .PF = {LGP ".50.20.1.75.*.*.%d", 0.01},
               .CURRENT = {LGP ".50.20.1.61.*.*.%d", 0.01},
               .VOLTAGE = {LGP ".50.20.1.56.*.*.%d", 0.1},
               .ENERGY = {LGP ".50.20.1.85.*.*.%d", KWH_TENTH},
               .count = LGP ".40.20.1.60.*.*"},
};

ERG_VENDOR_PROFILES(vertiv, &geist_v5, &geist_v4, &geist_v3_iec, &geist_v3_delta, &liebert_mph2);
