// SPDX-License-Identifier: GPL-3.0-or-later
/* Panduit: SmartZone G5 rack PDUs (PANDUIT-MIB, enterprises.19536) and the
 * SmartZone gateways / Sinetica Eagle-i, Hawk-i family (HAWK-I2-MIB,
 * enterprises.3711.24) with the PDUs they monitor. */
#include "vendors.h"

/* PANDUIT-MIB, pdug5 = enterprises.19536.10.1; daisy-chained PDUs, index
 * pdug5IdentIndex (1..): a "*" arc, every PDU of the chain read
 * ("outlet:2.5"); device N is PDU N.
 * pdug5IdentEntry ...10.1.1.2.1: .2 Name, .7 PartNumber (the model
 *   designation, e.g. P42D04M; .3 pdug5Model holds the rating text),
 *   .11 InputPhaseCount, .12 GroupCount, .13 OutletCount.
 * pdug5InputEntry ...10.1.2.1.1 (whole PDU): .4 PowerVA (VA), .5
 *   PowerWatts (W), .8 ResettableEnergy (Wh; .6 TotalEnergy is the same in
 *   kWh, not resettable but 1000 times coarser), .9 PowerFactor (0.01),
 *   .11 TotalCurrent (0.01 A, sum of the phase currents).
 * pdug5InputPhaseEntry ...10.1.2.2.1, {pdu}.{phase}: .3 Voltage (0.1 V),
 *   .11 Current (0.01 A), .19 PowerVA, .20 PowerWatts, .21 PowerWattHour
 *   (Wh), .23 PowerFactor (0.01).
 * pdug5GroupEntry ...10.1.3.1.1, {pdu}.{group} (breakers / outlet
 *   sections): .2 Name, .5 Voltage (0.1 V), .12 Current (0.01 A), .19
 *   PowerVA, .20 PowerWatts, .21 PowerWattHour (Wh), .23 PowerFactor (0.01).
 * pdug5OutletEntry ...10.1.5.1.1, {pdu}.{outlet}: .2 Name, .5 Current
 *   (0.01 A), .12 VA, .13 Watts, .14 Wh, .16 PowerFactor (0.01).
 * Negative values: not available. */
#define PG5 "1.3.6.1.4.1.19536.10.1"
static const struct erg_snmp_profile panduit_g5 = {
    .name = "panduit-g5",
    .vendor = "Panduit",
    .mib = "PANDUIT-MIB",
    .sysoids = {"1.3.6.1.4.1.19536.10"},
    .oid_model = PG5 ".1.2.1.7.1",
    .DEVICE = {.POWER = {PG5 ".2.1.1.5.%d", 1.0},
               .VA = {PG5 ".2.1.1.4.%d", 1.0},
               .PF = {PG5 ".2.1.1.9.%d", 0.01},
               .CURRENT = {PG5 ".2.1.1.11.%d", 0.01},
               .ENERGY = {PG5 ".2.1.1.8.%d", WH}},
    .PHASE = {.POWER = {PG5 ".2.2.1.20.*.%d", 1.0},
              .VA = {PG5 ".2.2.1.19.*.%d", 1.0},
              .PF = {PG5 ".2.2.1.23.*.%d", 0.01},
              .CURRENT = {PG5 ".2.2.1.11.*.%d", 0.01},
              .VOLTAGE = {PG5 ".2.2.1.3.*.%d", 0.1},
              .ENERGY = {PG5 ".2.2.1.21.*.%d", WH},
              .count = PG5 ".1.2.1.11.*"},
    .BANK = {.NAME = {PG5 ".3.1.1.2.*.%d"},
             .POWER = {PG5 ".3.1.1.20.*.%d", 1.0},
             .VA = {PG5 ".3.1.1.19.*.%d", 1.0},
             .PF = {PG5 ".3.1.1.23.*.%d", 0.01},
             .CURRENT = {PG5 ".3.1.1.12.*.%d", 0.01},
             .VOLTAGE = {PG5 ".3.1.1.5.*.%d", 0.1},
             .ENERGY = {PG5 ".3.1.1.21.*.%d", WH},
             .count = PG5 ".1.2.1.12.*"},
    .OUTLET = {.NAME = {PG5 ".5.1.1.2.*.%d"},
               .POWER = {PG5 ".5.1.1.13.*.%d", 1.0},
               .VA = {PG5 ".5.1.1.12.*.%d", 1.0},
               .PF = {PG5 ".5.1.1.16.*.%d", 0.01},
               .CURRENT = {PG5 ".5.1.1.5.*.%d", 0.01},
               .ENERGY = {PG5 ".5.1.1.14.*.%d", WH},
               .count = PG5 ".1.2.1.13.*"},
};

/* HAWK-I2-MIB v1 (objects = enterprises.3711.24.1.1): SmartZone gateways,
 * Eagle-i, Hawk-i, EnviroHawk, RMS Compact with serially attached PDUs
 * (pduNumber 1..24; each monitored PDU is one supply, mapped to an inlet).
 * pduMonEntry ...24.1.1.7.3.1.1, index pduMonPduNumber: .3 RMSVolts (V),
 *   .4 RMSAmps (0.1 A), .5 TotalEnergy (0.1 kWh), .6 MeanKVA (0.1 kVA),
 *   .7 MeanKWatts (0.1 kW), .8 PwrFactor (0.01); pduName
 *   ...24.1.1.7.1.2.1.3.{pdu} (pduCircuitName .16 is missing before Issue 9).
 * pduOutEntry ...24.1.1.7.2.3.1, {pdu}.{outlet} ("*" the PDU): .4 Name,
 *   .9 RMSAmps (0.1 A), .13 MeanKVA (0.1 kVA), .14 KWHr (0.1 kWh),
 *   .15 PFactor (0.01); pduNumOutlets ...24.1.1.7.1.2.1.11.{pdu}.
 * pduP2BrCctMonitorEntry ...24.1.1.11.1.1.1, {pdu}.{branch circuit}:
 *   .4 BrCctID, .6 BrCctCurrent (0.001 A); pduNumOfCctBrks
 *   ...24.1.1.7.1.2.1.14.{pdu}.
 * Gateways without PDUs (environment sensors only) have none of these. */
#define HK1 "1.3.6.1.4.1.3711.24.1.1"
static const struct erg_snmp_profile panduit_smartzone = {
    .name = "panduit-smartzone",
    .vendor = "Panduit/Sinetica",
    .mib = "HAWK-I2-MIB",
    .sysoids = {"1.3.6.1.4.1.3711.24"},
    .INLET = {.NAME = {HK1 ".7.1.2.1.3.%d"},
              .POWER = {HK1 ".7.3.1.1.7.%d", 100.0},
              .VA = {HK1 ".7.3.1.1.6.%d", 100.0},
              .PF = {HK1 ".7.3.1.1.8.%d", 0.01},
              .CURRENT = {HK1 ".7.3.1.1.4.%d", 0.1},
              .VOLTAGE = {HK1 ".7.3.1.1.3.%d", 1.0},
              .ENERGY = {HK1 ".7.3.1.1.5.%d", KWH_TENTH}},
    .BANK = {.NAME = {HK1 ".11.1.1.1.4.*.%d"},
             .CURRENT = {HK1 ".11.1.1.1.6.*.%d", 0.001},
             .count = HK1 ".7.1.2.1.14.*"},
    .OUTLET = {.NAME = {HK1 ".7.2.3.1.4.*.%d"},
               .VA = {HK1 ".7.2.3.1.13.*.%d", 100.0},
               .PF = {HK1 ".7.2.3.1.15.*.%d", 0.01},
               .CURRENT = {HK1 ".7.2.3.1.9.*.%d", 0.1},
               .ENERGY = {HK1 ".7.2.3.1.14.*.%d", KWH_TENTH},
               .count = HK1 ".7.1.2.1.11.*"},
};

/* HAWK-I2-MIB v2 "PDU2" section (pdu2Common = enterprises.3711.24.2.1.1.1),
 * SmartZone G5 PDUs behind a gateway; index pduNumber (the MIB comments
 * "(0..1)", 1 taken as the first PDU).
 * pdu2InputAggregateEntry ...2.1.1.1.3.1, per PDU (inlet): .3 kWh
 *   (0.01 kWh), .4 kVA (0.01 kVA), .5 kW (0.01 kW), .6 PF (0.001),
 *   .7 Current (0.001 A).
 * pdu2PhaseMonitorEntry ...2.1.1.1.4.1, {pdu}.{phase}: .4 LineID,
 *   .5 PhaseToNeutralVoltage (0.1 V), .6 Current (0.001 A), .7 kVA
 *   (0.01 kVA), .10 kW (0.01 kW), .11 PF (0.001), .12 kWh (0.01 kWh).
 * pdu2BranchCircuitMonitorEntry ...2.1.1.1.6.1, {pdu}.{branch}: .4 ID,
 *   .6 Current (0.001 A).
 * pdu2OutletMonitorEntry ...2.1.1.1.7.1, {pdu}.{outlet}: .4 OutletID,
 *   .5 Voltage (0.1 V), .6 Current (0.001 A), .7 kVA (0.01 kVA), .10 kW
 *   (0.01 kW), .11 PF (0.001), .12 kWh (0.01 kWh). */
#define HK2 "1.3.6.1.4.1.3711.24.2.1.1.1"
static const struct erg_snmp_profile panduit_smartzone_g5 = {
    .name = "panduit-smartzone-g5",
    .vendor = "Panduit/Sinetica",
    .mib = "HAWK-I2-MIB",
    .sysoids = {"1.3.6.1.4.1.3711.24"},
    .INLET = {.POWER = {HK2 ".3.1.5.%d", 10.0},
              .VA = {HK2 ".3.1.4.%d", 10.0},
              .PF = {HK2 ".3.1.6.%d", 0.001},
              .CURRENT = {HK2 ".3.1.7.%d", 0.001},
              .ENERGY = {HK2 ".3.1.3.%d", KWH_HUNDREDTH}},
    .PHASE = {.NAME = {HK2 ".4.1.4.1.%d"},
              .POWER = {HK2 ".4.1.10.1.%d", 10.0},
              .VA = {HK2 ".4.1.7.1.%d", 10.0},
              .PF = {HK2 ".4.1.11.1.%d", 0.001},
              .CURRENT = {HK2 ".4.1.6.1.%d", 0.001},
              .VOLTAGE = {HK2 ".4.1.5.1.%d", 0.1},
              .ENERGY = {HK2 ".4.1.12.1.%d", KWH_HUNDREDTH}},
    .BANK = {.NAME = {HK2 ".6.1.4.1.%d"}, .CURRENT = {HK2 ".6.1.6.1.%d", 0.001}},
    .OUTLET = {.NAME = {HK2 ".7.1.4.1.%d"},
               .POWER = {HK2 ".7.1.10.1.%d", 10.0},
               .VA = {HK2 ".7.1.7.1.%d", 10.0},
               .PF = {HK2 ".7.1.11.1.%d", 0.001},
               .CURRENT = {HK2 ".7.1.6.1.%d", 0.001},
               .VOLTAGE = {HK2 ".7.1.5.1.%d", 0.1},
               .ENERGY = {HK2 ".7.1.12.1.%d", KWH_HUNDREDTH}},
};

ERG_VENDOR_PROFILES(panduit, &panduit_g5, &panduit_smartzone, &panduit_smartzone_g5);
