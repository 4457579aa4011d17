// SPDX-License-Identifier: GPL-3.0-or-later
/* Chatsworth Products (CPI): eConnect PDUs. */
#include "vendors.h"

/* CPI-UNIFIED-MIB, legacy branch (enterprises.30932.1.1): scalars, one per
 * branch or outlet, so instance ".0" follows the entity number.
 * BANK    the branches (line pairs of up to two circuits: XY1, YZ1, ZX1,
 *   XY2, YZ2, ZX2 = 1..6): metrics ...1.3.1.N currentXXn (0.01 A), ...1.3.2.N
 *   voltageXXn (0.1 V), ...1.3.3.N powerXXn (W), ...1.3.4.N powerFactXXn
 *   (x100, -100..100), ...1.3.11.N energyXXns (Counter64, decawatt-seconds:
 *   "divide by 360 to obtain Wh", i.e. 10 J). No name column.
 * OUTLET  receptacles 1..24: ...1.2.42.N outletNName, ...1.3.5.N
 *   outletNCurrent (0.01 A), ...1.3.12.N receptacleEnergyoutletNs
 *   (decawatt-seconds, 10 J). No outlet voltage or power.
 * modelCode ...1.1.2.0 (still answered by the unity firmware below).
 *
 * Not covered: the "unity" branch (enterprises.30932.1.10.1) that current
 * eConnect firmware (5.x) answers instead of the legacy metrics. Its tables
 * are indexed {entityId, cpiPduMac} where cpiPduMac is a 12-character
 * string (".12.48.48.48.69.68..."), the MAC of each PDU of the chain,
 * AFTER the entity number; a template (one "%d" and literal arcs) cannot
 * name it. For a driver that learns the index tail from the first row of
 * cpiPduTable (...10.1.2.10.1.1 cpiPduMac), the columns are:
 *   DEVICE  cpiPduTable ...10.1.2.10.1.{col}.{mac}: .2 cpiPduModel, .16
 *           cpiPduTotalPower (VA, "power in volt-amps for the entire PDU").
 *   PHASE   cpiPduLineTable ...10.1.3.10.1.{col}.{line}.{mac}: .3
 *           cpiPduLineCurrent (0.01 A).
 *   BANK    cpiPduBranchTable ...10.1.3.110.1.{col}.{branch}.{mac}: .3
 *           Current (0.01 A), .5 Voltage (0.1 V), .6 Power (VA), .7
 *           PowerFactor (units not stated), .9 Energy (decaVA-seconds:
 *           apparent energy).
 *   OUTLET  cpiPduOutletTable ...10.1.4.10.1.{col}.{outlet}.{mac}: .4 Name,
 *           .6 Current (0.01 A), .7 Voltage (0.1 V), .8 Power (VA), .10
 *           Energy (decawatt-seconds).
 * The unity outlet numbers run on across the chain (outlets 25..36 belong
 * to the second PDU's MAC). sysObjectID of these units is not a CPI OID. */
#define CPI "1.3.6.1.4.1.30932.1.1"
static const struct erg_snmp_profile chatsworth_econnect = {
    .name = "chatsworth-econnect",
    .vendor = "Chatsworth Products",
    .mib = "CPI-UNIFIED-MIB (legacy)",
    .sysoids = {"1.3.6.1.4.1.30932"},
    .oid_model = CPI ".1.2.0",
    .BANK = {.POWER = {CPI ".3.3.%d.0", 1.0},
             .PF = {CPI ".3.4.%d.0", 0.01},
             .CURRENT = {CPI ".3.1.%d.0", 0.01},
             .VOLTAGE = {CPI ".3.2.%d.0", 0.1},
             .ENERGY = {CPI ".3.11.%d.0", 10.0},
             .max = 6},
    .OUTLET = {.NAME = {CPI ".2.42.%d.0"},
               .CURRENT = {CPI ".3.5.%d.0", 0.01},
               .ENERGY = {CPI ".3.12.%d.0", 10.0},
               .max = 24},
};

ERG_VENDOR_PROFILES(chatsworth, &chatsworth_econnect);
