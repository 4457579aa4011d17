// SPDX-License-Identifier: GPL-3.0-or-later
/* Dell. */
#include "vendors.h"

/* DellrPDU-MIB (v1.0r, 2009), enterprises.674.10903.200.2.200: Dell rack
 * PDUs (metered / managed). Tables are indexed by a row number over the
 * connected units (the host unit's rows first), so the entity number is the
 * row number and the counts are the host's (rPDUDevicePropertiesEntry
 * ...200.110.4.1.{n}.1: .5 NumMtrdOuts, .6 NumPhases).
 * Device: rPDUDeviceStatusEntry ...200.110.2.1.{col}.1: .3 Power (1/100 of
 *   kW), .4 Energy (tenths of kWh, user resettable).
 * Phase: rPDUPhaseStatusEntry ...200.120.2.1: .4 Current (tenths of A),
 *   .5 Voltage (V), .6 Power (hundredths of kW).
 * Outlet: rPDUOutletMeteredStatusEntry ...200.130.2.2.1: .3 Name, .6 Current
 *   ("in Amps" says the MIB), .7 Energy ("in kilowatt-hours"), .8 Power (no
 *   unit given: W, as in the APC rPDU2 MIB this one follows column for
 *   column, where the outlet current and energy are in tenths; the MIB's
 *   units are used here as written).
 * No bank table. Model: rPDUIdentModelNumberD ...200.100.2.1.7.1.
 * sysObjectID: sysRPDUV1 1.3.6.1.4.1.674.10903.200.3.1. */
#define DR "1.3.6.1.4.1.674.10903.200.2.200"
static const struct erg_snmp_profile dell_rpdu = {
    .name = "dell-rpdu",
    .vendor = "Dell",
    .mib = "DellrPDU-MIB",
    .sysoids = {"1.3.6.1.4.1.674.10903.200"},
    .oid_model = DR ".100.2.1.7.1",
    .DEVICE = {.POWER = {DR ".110.2.1.3.1", 10.0}, .ENERGY = {DR ".110.2.1.4.1", KWH_TENTH}},
    .PHASE = {.POWER = {DR ".120.2.1.6.%d", 10.0},
              .CURRENT = {DR ".120.2.1.4.%d", 0.1},
              .VOLTAGE = {DR ".120.2.1.5.%d", 1.0},
              .count = DR ".110.4.1.6.1"},
    .OUTLET = {.NAME = {DR ".130.2.2.1.3.%d"},
               .POWER = {DR ".130.2.2.1.8.%d", 1.0},
               .CURRENT = {DR ".130.2.2.1.6.%d", 1.0},
               .ENERGY = {DR ".130.2.2.1.7.%d", KWH},
               .count = DR ".110.4.1.5.1"},
};

ERG_VENDOR_PROFILES(dell, &dell_rpdu);
