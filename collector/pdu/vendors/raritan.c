// SPDX-License-Identifier: GPL-3.0-or-later
/* Raritan (Legrand). */
#include "vendors.h"

/* PDU2-MIB (PX2, PX3, PX4, PMC; enterprises.13742.6). Every table starts
 * with pduId (1 the master of a cascade, 2.. its members: "PX3-5493U with
 * expansion units"): a "*" arc, each unit's rows read ("outlet:2.5").
 *
 * Readings are sensors, one row per {entity, sensorType}:
 *   measurements*SensorValue (Unsigned32), scaled by 10^-*DecimalDigits of
 *   the matching *SensorConfigurationTable row (column 7, same index).
 *   sensorType (SensorTypeEnumeration): rmsCurrent(1) A, rmsVoltage(4) V,
 *   activePower(5) W, apparentPower(6) VA, powerFactor(7) (0..1),
 *   activeEnergy(8) Wh, rmsVoltageLN(25) V.
 * DEVICE  unitSensorMeasurementsTable ...6.5.1.3.1.4.{pdu}.{type}, digits
 *   unitSensorConfigurationTable ...6.3.2.5.1.7 (PX4 and later firmware
 *   only: activePower, apparentPower, activeEnergy; unitDeviceCapabilities).
 * INLET   inletSensorMeasurementsTable ...6.5.2.3.1.4.{pdu}.{inlet}.{type},
 *   digits ...6.3.3.4.1.7; inletName ...6.3.3.3.1.3 (the user's name, which
 *   operators match nodes by; absent on older firmware: rows then come from
 *   the power column; inletLabel .2 is the printed "I1");
 *   inletCount unitConfigurationTable ...6.3.2.2.1.2.{pdu}.
 * PHASE   the poles of inlet 1: inletPoleSensorMeasurementsTable
 *   ...6.5.2.4.1.4.{pdu}.{inlet}.{pole}.{type}, digits ...6.3.3.6.1.7;
 *   inletPoleCount ...6.3.3.3.1.5.{pdu}.{inlet}. Poles 1..3 are L1..L3;
 *   pole 4 (or 2 on a single-phase inlet) is the neutral, 5 earth on power
 *   meters: max 3 keeps the neutral of 3-phase units out. Voltage is the
 *   line-to-neutral one (rmsVoltageLN); pole rmsVoltage(4) is line-to-line
 *   on 3-phase units. Most PDUs meter only current (and voltage) per pole;
 *   power, VA, PF and energy per pole come with inline meters / newer
 *   firmware. There is no pole label column.
 * BANK    overcurrent protectors (breakers/fuses):
 *   overCurrentProtectorSensorMeasurementsTable ...6.5.3.3.1.4.{pdu}.{ocp}.
 *   {type}, digits ...6.3.4.4.1.7; only rmsCurrent is metered;
 *   overCurrentProtectorLabel ...6.3.4.3.1.2; overCurrentProtectorCount
 *   ...6.3.2.2.1.3.{pdu}.
 * OUTLET  outletSensorMeasurementsTable ...6.5.4.3.1.4.{pdu}.{outlet}.{type},
 *   digits ...6.3.5.4.1.7; outletName ...6.3.5.3.1.3 (the user's name, may
 *   be empty; outletLabel .2 is the printed "1".."n"); outletCount
 *   ...6.3.2.2.1.4.{pdu}.
 * pduModel nameplateTable ...6.3.2.1.1.3.{pdu}. */
#define RP2 "1.3.6.1.4.1.13742.6"
#define RP2_UNIT(t, sc) RP2 ".5.1.3.1.4.*." #t, sc, RP2 ".3.2.5.1.7.*." #t
#define RP2_IN(t, sc) RP2 ".5.2.3.1.4.*.%d." #t, sc, RP2 ".3.3.4.1.7.*.%d." #t
#define RP2_POLE(t, sc) RP2 ".5.2.4.1.4.*.1.%d." #t, sc, RP2 ".3.3.6.1.7.*.1.%d." #t
#define RP2_OCP(t, sc) RP2 ".5.3.3.1.4.*.%d." #t, sc, RP2 ".3.4.4.1.7.*.%d." #t
#define RP2_OUT(t, sc) RP2 ".5.4.3.1.4.*.%d." #t, sc, RP2 ".3.5.4.1.7.*.%d." #t
static const struct erg_snmp_profile raritan_pdu2 = {
    .name = "raritan-pdu2",
    .vendor = "Raritan",
    .mib = "PDU2-MIB",
    .sysoids = {RP2},
    .oid_model = RP2 ".3.2.1.1.3.1",
    .DEVICE = {.POWER = {RP2_UNIT(5, 1.0)}, .VA = {RP2_UNIT(6, 1.0)}, .ENERGY = {RP2_UNIT(8, WH)}},
    .INLET = {.NAME = {RP2 ".3.3.3.1.3.*.%d"},
              .POWER = {RP2_IN(5, 1.0)},
              .VA = {RP2_IN(6, 1.0)},
              .PF = {RP2_IN(7, 1.0)},
              .CURRENT = {RP2_IN(1, 1.0)},
              .VOLTAGE = {RP2_IN(4, 1.0)},
              .ENERGY = {RP2_IN(8, WH)},
              .count = RP2 ".3.2.2.1.2.*"},
    .PHASE = {.POWER = {RP2_POLE(5, 1.0)},
              .VA = {RP2_POLE(6, 1.0)},
              .PF = {RP2_POLE(7, 1.0)},
              .CURRENT = {RP2_POLE(1, 1.0)},
              .VOLTAGE = {RP2_POLE(25, 1.0)},
              .ENERGY = {RP2_POLE(8, WH)},
              .count = RP2 ".3.3.3.1.5.*.1",
              .max = 3},
    .BANK = {.NAME = {RP2 ".3.4.3.1.2.*.%d"},
             .CURRENT = {RP2_OCP(1, 1.0)},
             .count = RP2 ".3.2.2.1.3.*"},
    .OUTLET = {.NAME = {RP2 ".3.5.3.1.3.*.%d"},
               .POWER = {RP2_OUT(5, 1.0)},
               .VA = {RP2_OUT(6, 1.0)},
               .PF = {RP2_OUT(7, 1.0)},
               .CURRENT = {RP2_OUT(1, 1.0)},
               .VOLTAGE = {RP2_OUT(4, 1.0)},
               .ENERGY = {RP2_OUT(8, WH)},
               .count = RP2 ".3.2.2.1.4.*"},
};

/* PDU-MIB (Dominion PX, "PX1"; enterprises.13742.4). Plain integer columns,
 * fixed units: mA, mV, W, VA, PF in percent, Wh.
 * DEVICE  unitReadings scalars ...4.1.3.1: .1 unitCurrent (mA), .2
 *   unitVoltage (mV), .3 unitActivePower (W), .4 unitApparentPower (VA).
 *   Deprecated in favour of the inlet table but kept by firmware.
 * INLET   inletTable ...4.1.20.2.1, index inletIndex: .7 inletCurrent (mA),
 *   .8 inletVoltage (mV) (both 0 on 3-phase units), .9 inletActivePower (W),
 *   .10 inletApparentPower (VA), .11 inletPowerFactor (%), .12
 *   inletActiveEnergy (Wh; "invalid" - it reads 0 - when outletEnergySupport
 *   ...4.1.1.32.0 is No); no label column; inletCount ...4.1.20.1.0.
 * PHASE   inletPoleTable ...4.1.21.2.1, index {inletIndex, inletPoleIndex},
 *   inlet 1: .2 inletPoleLabel ("L1"), .3 Current (mA), .4 Voltage (mV;
 *   L-N or L-L as wired), .7 ActivePower (W), .8 ApparentPower (VA), .9
 *   PowerFactor (%), .11 ActiveEnergy (Wh) (power..energy valid on inline
 *   meters only); inletPoleCount ...4.1.20.2.1.3.1. The deprecated
 *   lineCurrentTable (...4.1.4) also lists the neutral; not used.
 * BANK    circuitBreakerTable ...4.1.5.2.1: .2 Label, .5 Current (mA);
 *   circuitBreakerCount ...4.1.5.1.0.
 * OUTLET  outletTable ...4.1.2.2.1: .2 outletLabel, .4 outletCurrent (mA),
 *   .6 outletVoltage (mV), .7 outletActivePower (W), .8 outletApparentPower
 *   (VA), .9 outletPowerFactor (%), .31 outletWattHours (Wh); outletCount
 *   ...4.1.2.1.0. Firmware without per-outlet power sensing gives only
 *   current and VA.
 * objectName ...4.1.1.12.0 is "the model type of the device". */
#define RPX "1.3.6.1.4.1.13742.4.1"
static const struct erg_snmp_profile raritan_px1 = {
    .name = "raritan-px1",
    .vendor = "Raritan",
    .mib = "PDU-MIB (Raritan)",
    .sysoids = {"1.3.6.1.4.1.13742.4"},
    .oid_model = RPX ".1.12.0",
    .DEVICE = {.POWER = {RPX ".3.1.3.0", 1.0},
               .VA = {RPX ".3.1.4.0", 1.0},
               .CURRENT = {RPX ".3.1.1.0", 0.001},
               .VOLTAGE = {RPX ".3.1.2.0", 0.001}},
    .INLET = {.POWER = {RPX ".20.2.1.9.%d", 1.0},
              .VA = {RPX ".20.2.1.10.%d", 1.0},
              .PF = {RPX ".20.2.1.11.%d", 0.01},
              .CURRENT = {RPX ".20.2.1.7.%d", 0.001},
              .VOLTAGE = {RPX ".20.2.1.8.%d", 0.001},
              .ENERGY = {RPX ".20.2.1.12.%d", WH},
              .count = RPX ".20.1.0"},
    .PHASE = {.NAME = {RPX ".21.2.1.2.1.%d"},
              .POWER = {RPX ".21.2.1.7.1.%d", 1.0},
              .VA = {RPX ".21.2.1.8.1.%d", 1.0},
              .PF = {RPX ".21.2.1.9.1.%d", 0.01},
              .CURRENT = {RPX ".21.2.1.3.1.%d", 0.001},
              .VOLTAGE = {RPX ".21.2.1.4.1.%d", 0.001},
              .ENERGY = {RPX ".21.2.1.11.1.%d", WH},
              .count = RPX ".20.2.1.3.1",
              .max = 3},
    .BANK = {.NAME = {RPX ".5.2.1.2.%d"},
             .CURRENT = {RPX ".5.2.1.5.%d", 0.001},
             .count = RPX ".5.1.0"},
    .OUTLET = {.NAME = {RPX ".2.2.1.2.%d"},
               .POWER = {RPX ".2.2.1.7.%d", 1.0},
               .VA = {RPX ".2.2.1.8.%d", 1.0},
               .PF = {RPX ".2.2.1.9.%d", 0.01},
               .CURRENT = {RPX ".2.2.1.4.%d", 0.001},
               .VOLTAGE = {RPX ".2.2.1.6.%d", 0.001},
               .ENERGY = {RPX ".2.2.1.31.%d", WH},
               .count = RPX ".2.1.0"},
};

ERG_VENDOR_PROFILES(raritan, &raritan_pdu2, &raritan_px1);
