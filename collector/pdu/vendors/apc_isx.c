// SPDX-License-Identifier: GPL-3.0-or-later
/* APC/Schneider: InfraStruXure modular power distribution. */
#include "vendors.h"

/* PowerNet-MIB, isxModularDistribution = enterprises.318.1.1.22: the
 * modular distribution of InfraStruXure PDUs and the ISX rack PDUs
 * (sysObjectID isxModDistribution 318.1.3.24: .1 24-module half-rack,
 * .2 6-module rack PDU). Power in tenths of kW, energy in tenths of kWh
 * throughout (every kWh column "may be cleared" by the user).
 * DEVICE  isxModularDistSysPower ...22.4.3: .1.0 Total (0.1 kW), .2.0
 *         KwhUsage (0.1 kWh).
 * PHASE   the system output phases: isxModularDistSysPowerEntry
 *         ...22.4.3.5.1.{col}.{phase}: .2 Kw (0.1 kW), .3 KwhPhaseUsage
 *         (0.1 kWh); isxModularDistSysCurrentEntry ...22.4.2.11.1.3.{phase}
 *         Amps (0.1 A); isxModularDistSysVoltageEntry
 *         ...22.4.1.15.1.3.{phase} LtoN (0.1 V).
 * INLET   the subfeeds, isxModularDistSubFeedInfoEntry ...22.3.2.1.{col}.
 *         {subfeed}: .2 Name, .17 TotalPower (0.1 kW), .18 KwhUsage (0.1 kWh).
 * OUTLET  the distribution cables of a module,
 *         isxModularDistModuleOutputEntry ...22.2.6.1.{col}.{module}.{cable}:
 *         .4 Name, .20 TotalPower (0.1 kW), .21 KwhUsage (0.1 kWh); the
 *         module is the unit (a "*" arc), every module's cables read
 *         ("outlet:3.1").
 * (The breakers, ...22.2.4, are indexed {module, phase}: not a level.)
 * No recording checks it: from the MIB only. */
#define ISX "1.3.6.1.4.1.318.1.1.22"
static const struct erg_snmp_profile apc_isx = {
    .name = "apc-isx-dist",
    .vendor = "APC/Schneider",
    .mib = "PowerNet-MIB isxModularDistribution",
    .sysoids = {"1.3.6.1.4.1.318.1.3.24"},
    .oid_model = "1.3.6.1.4.1.318.1.1.23.1.1.0", /* isxModularPduIdentModelNumber */
    .DEVICE = {.POWER = {ISX ".4.3.1.0", 100.0}, .ENERGY = {ISX ".4.3.2.0", KWH_TENTH}},
    .PHASE = {.POWER = {ISX ".4.3.5.1.2.%d", 100.0},
              .CURRENT = {ISX ".4.2.11.1.3.%d", 0.1},
              .VOLTAGE = {ISX ".4.1.15.1.3.%d", 0.1},
              .ENERGY = {ISX ".4.3.5.1.3.%d", KWH_TENTH}},
    .INLET = {.NAME = {ISX ".3.2.1.2.%d"},
              .POWER = {ISX ".3.2.1.17.%d", 100.0},
              .ENERGY = {ISX ".3.2.1.18.%d", KWH_TENTH}},
    .OUTLET = {.NAME = {ISX ".2.6.1.4.*.%d"},
               .POWER = {ISX ".2.6.1.20.*.%d", 100.0},
               .ENERGY = {ISX ".2.6.1.21.*.%d", KWH_TENTH}},
};

ERG_VENDOR_PROFILES(apc_isx, &apc_isx);
