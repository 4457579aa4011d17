// SPDX-License-Identifier: GPL-3.0-or-later
/* Tripp Lite (Eaton) PowerAlert. */
#include "vendors.h"

/* TRIPPLITE-PRODUCTS (PowerAlert 15+; TRIPPLITE-12X, the 12.x agents' MIB,
 * has no PDU tables), tlpPdu branch enterprises.850.1.1.3.2. Every table is
 * indexed {tlpDeviceIndex}.{n}: the PowerAlert agent numbers the devices it
 * manages: a "*" arc, every device's rows read ("outlet:2.5"); device N
 * is tlpDevice N. Unsigned32 values.
 * Device: tlpPduDeviceOutputPowerTotal ...3.2.2.1.1.9.1 (W, all circuits).
 *   (tlpPduDeviceAggregatePowerFactor .10 is left out: its UNITS say
 *   "0.1 Watts", so the scale of this power factor is not known.)
 * Phase: tlpPduOutputEntry ...3.2.3.2.1.1 (one row per output line, i.e.
 *   per phase; tlpPduOutputPhase .2 names it): .4 Voltage (0.1 V), .5
 *   Current (0.01 A; resolution per tlpPduDeviceOutputCurrentPrecision),
 *   .8 ActivePower (W), .9 PowerFactor (0.01 %), .12 CalculatedPowerKVA
 *   (0.01 kVA). (.14 Calculated24hrEnergy is a 24-hour estimate, not a
 *   meter; tlpPduInputPhaseEntry ...3.2.3.1.2.1 repeats input phase V and A.)
 *   count tlpPduIdentNumOutputs ...3.2.1.2.1.2.1.
 * Bank: tlpPduCircuitEntry ...3.2.3.4.1.1 (a breaker-protected group of
 *   receptacles): .3 InputVoltage (0.1 V), .4 TotalCurrent (0.01 A),
 *   .8 TotalPower (W), .9 PowerFactor (percent). count tlpPduIdentNumCircuits
 *   ...3.2.1.2.1.6.1.
 * Outlet: tlpPduOutletEntry ...3.2.3.3.1.1: .2 Name, .7 Voltage (0.1 V),
 *   .8 Current (0.01 A), .9 Power (W); the measurements are absent
 *   (noSuchName) on models without per-receptacle metering
 *   (tlpPduSupportsOutletCurrentPower). count tlpPduIdentNumOutlets
 *   ...3.2.1.2.1.4.1.
 * Model: tlpDeviceModel ...1.2.1.5.1. sysObjectID: PowerAlert answers
 * tlpDevice 1.3.6.1.4.1.850.1.1.1; tlpPdu 1.3.6.1.4.1.850.1.1.3.2. */
#define TL "1.3.6.1.4.1.850.1.1"
#define TLP TL ".3.2"
static const struct erg_snmp_profile tripplite_pdu = {
    .name = "tripplite-pdu",
    .vendor = "Tripp Lite",
    .mib = "TRIPPLITE-PRODUCTS",
    .sysoids = {"1.3.6.1.4.1.850.1.1.1", "1.3.6.1.4.1.850.1.1.3.2", "1.3.6.1.4.1.850"},
    .oid_model = TL ".1.2.1.5.1",
    .DEVICE = {.POWER = {TLP ".2.1.1.9.%d", 1.0}},
    .PHASE = {.POWER = {TLP ".3.2.1.1.8.*.%d", 1.0},
              .VA = {TLP ".3.2.1.1.12.*.%d", 10.0},
              .PF = {TLP ".3.2.1.1.9.*.%d", 1e-4},
              .CURRENT = {TLP ".3.2.1.1.5.*.%d", 0.01},
              .VOLTAGE = {TLP ".3.2.1.1.4.*.%d", 0.1},
              .count = TLP ".1.2.1.2.*"},
    .BANK = {.POWER = {TLP ".3.4.1.1.8.*.%d", 1.0},
             .PF = {TLP ".3.4.1.1.9.*.%d", 0.01},
             .CURRENT = {TLP ".3.4.1.1.4.*.%d", 0.01},
             .VOLTAGE = {TLP ".3.4.1.1.3.*.%d", 0.1},
             .count = TLP ".1.2.1.6.*"},
    .OUTLET = {.NAME = {TLP ".3.3.1.1.2.*.%d"},
               .POWER = {TLP ".3.3.1.1.9.*.%d", 1.0},
               .CURRENT = {TLP ".3.3.1.1.8.*.%d", 0.01},
               .VOLTAGE = {TLP ".3.3.1.1.7.*.%d", 0.1},
               .count = TLP ".1.2.1.4.*"},
};

ERG_VENDOR_PROFILES(tripplite, &tripplite_pdu);
