// SPDX-License-Identifier: GPL-3.0-or-later
/* Ingrasys iPoMan (also sold as Leunig ePowerSwitch / IPOMAN). */
#include "vendors.h"

/* IPOMANII-MIB (iPoManII = enterprises.2468.1.4.2; ipmDevice ...1.3),
 * master unit only (the daisy-chained slaves are in ipmSlave ...1.4).
 *   ipmDeviceInletNumber ...1.3.1.1.0; inletConfigDesc ...1.3.1.2.1.2.{n};
 *   ipmDeviceInletStatusEntry ...1.3.1.3.1: .2 Voltage (0.1 V), .3 Current
 *   (0.001 A), .5 Kwatt (energy, 0.1 kWh).
 *   ipmDeviceOutletNumber ...1.3.2.1.0; outletConfigDesc ...1.3.2.2.1.2.{n};
 *   ipmDeviceOutletStatusEntry ...1.3.2.3.1: .3 Current (0.001 A), .4 Kwatt
 *   (energy, 0.001 kWh = Wh).
 * There is no power column the MIB states unambiguously: inletStatusWH
 * (.6, "Kwatt in 0.1 W/H") and outletStatusWH (.5, "Watt in 0.1 W/H") could
 * be watts or watt-hours and are not used, so power is estimated from
 * A x V (outlets borrow the inlet voltage). ipmIdentModel ...1.1.2.0. */
#define IPM "1.3.6.1.4.1.2468.1.4.2.1"
static const struct erg_snmp_profile ipoman_ii = {
    .name = "ipoman-ii",
    .vendor = "Ingrasys",
    .mib = "IPOMANII-MIB",
    .sysoids = {"1.3.6.1.4.1.2468.1.4.2"},
    .oid_model = IPM ".1.2.0",
    .INLET = {.NAME = {IPM ".3.1.2.1.2.%d"},
              .CURRENT = {IPM ".3.1.3.1.3.%d", 0.001},
              .VOLTAGE = {IPM ".3.1.3.1.2.%d", 0.1},
              .ENERGY = {IPM ".3.1.3.1.5.%d", KWH_TENTH},
              .count = IPM ".3.1.1.0"},
    .OUTLET = {.NAME = {IPM ".3.2.2.1.2.%d"},
               .CURRENT = {IPM ".3.2.3.1.3.%d", 0.001},
               .ENERGY = {IPM ".3.2.3.1.4.%d", WH},
               .count = IPM ".3.2.1.0"},
};

ERG_VENDOR_PROFILES(ipoman, &ipoman_ii);
