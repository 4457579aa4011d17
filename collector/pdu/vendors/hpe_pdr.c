// SPDX-License-Identifier: GPL-3.0-or-later
/* HPE (HP): Power Distribution Rack. */
#include "vendors.h"

/* CPQPOWER-MIB (v1.80), branch pdr = enterprises.232.165.4: the Power
 * Distribution Rack, a cabinet of panels (subfeeds) of breakers.
 * pdrIdent ...165.4.1: .2.0 pdrModel, .10.0 pdrNumPanels.
 * INLET   the panels, pdrPanelEntry ...165.4.2.1.1.{col}.{panel}: .3
 *         pdrPanelPower ("Units 0.1 KW"), .7 pdrPanelTotalKWH (0.01 kWh,
 *         since in service or the last reset). The panel's voltages and
 *         currents are per phase (.8-.10 VoltageA-C, .11-.13 CurrentA-C,
 *         0.1 V, 0.1 A) in columns of one row: not read.
 * BANK    the breakers, pdrBreakerEntry ...165.4.3.1.1.{col}.{panel}.
 *         {breaker}: .12 pdrBreakerPower (W), .10 pdrBreakerCurrent (0.1 A),
 *         .9 pdrBreakerTotalKWH (0.01 kWh). Indexed by panel, then breaker:
 *         the panel is the unit (a "*" arc), every panel's breakers read
 *         ("bank:2.1").
 * sysObjectID: the management module's, "232.165.4" for a PDR (CPQPOWER-MIB's
 * comment on sysObjectID). No recording checks it: from the MIB only. */
#define PDR "1.3.6.1.4.1.232.165.4"
static const struct erg_snmp_profile hpe_pdr = {
    .name = "hpe-pdr",
    .vendor = "HPE",
    .mib = "CPQPOWER-MIB pdr",
    .sysoids = {PDR},
    .oid_model = PDR ".1.2.0",
    .INLET = {.POWER = {PDR ".2.1.1.3.%d", 100.0},
              .ENERGY = {PDR ".2.1.1.7.%d", KWH_HUNDREDTH},
              .count = PDR ".1.10.0"},
    .BANK = {.POWER = {PDR ".3.1.1.12.*.%d", 1.0},
             .CURRENT = {PDR ".3.1.1.10.*.%d", 0.1},
             .ENERGY = {PDR ".3.1.1.9.*.%d", KWH_HUNDREDTH}},
};

ERG_VENDOR_PROFILES(hpe_pdr, &hpe_pdr);
