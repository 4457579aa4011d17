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
 * The "unity" branch (enterprises.30932.1.10.1) that current eConnect
 * firmware (5.x) answers instead of the legacy metrics, indexed {entity,
 * PDU MAC}: chatsworth_unity.c. */
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
