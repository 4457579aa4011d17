// SPDX-License-Identifier: GPL-3.0-or-later
/* Enlogic. */
#include "vendors.h"

/* ENLOGIC-PDU-MIB and ENLOGIC-PDU2-MIB (EN2.0; enterprises.38446.1): the
 * status tables below are the same in both. Tables are indexed
 * {pduUnitStatusIndex}.{n}: a "*" arc, every unit of the daisy chain read
 * (1 the parent; "outlet:2.5"); device N is unit N.
 * pduUnitStatusEntry ...1.2.4.1: .2 Name, .4 ActivePower (W),
 *   .5 ApparentPower (VA), .9 Energy (lifetime, 0.1 kWh).
 * pduInputPhaseStatusEntry ...1.3.4.1: .5 Current (0.01 A), .6 Voltage (V),
 *   .7 ActivePower (W), .8 ApparentPower (VA), .9 PowerFactor (ratio; the
 *   agent reports hundredths). Rows 1..3 are the Y phases or the delta
 *   lines; rows 4..6, on delta units only, repeat the delta phase values,
 *   hence max 3.
 * pduCircuitBreakerStatusEntry ...1.4.4.1: .3 Label, .5 Current (0.01 A).
 * pduOutletMeteredStatusEntry ...1.5.9.1: .3 Name, .5 Current (0.01 A),
 *   .6 ActivePower (W), .7 PowerFactor (hundredths), .11 ResettableEnergy
 *   (0.1 kWh; the only outlet energy counter, a user may zero it).
 * pduUnitPropertiesEntry ...1.2.3.1: .5 MeteredOutletCount,
 *   .6 InputPhaseCount, .7 CircuitBreakerCount.
 * pduNamePlateModelNumber ...1.1.2.1.10. */
#define EN "1.3.6.1.4.1.38446.1"
static const struct erg_snmp_profile enlogic_pdu = {
    .name = "enlogic-pdu",
    .vendor = "Enlogic",
    .mib = "ENLOGIC-PDU-MIB / ENLOGIC-PDU2-MIB",
    .sysoids = {"1.3.6.1.4.1.38446"},
    .oid_model = EN ".1.2.1.10.1",
    .DEVICE = {.NAME = {EN ".2.4.1.2.%d"},
               .POWER = {EN ".2.4.1.4.%d", 1.0},
               .VA = {EN ".2.4.1.5.%d", 1.0},
               .ENERGY = {EN ".2.4.1.9.%d", KWH_TENTH}},
    .PHASE = {.POWER = {EN ".3.4.1.7.*.%d", 1.0},
              .VA = {EN ".3.4.1.8.*.%d", 1.0},
              .PF = {EN ".3.4.1.9.*.%d", 0.01},
              .CURRENT = {EN ".3.4.1.5.*.%d", 0.01},
              .VOLTAGE = {EN ".3.4.1.6.*.%d", 1.0},
              .count = EN ".2.3.1.6.*",
              .max = 3},
    .BANK = {.NAME = {EN ".4.4.1.3.*.%d"},
             .CURRENT = {EN ".4.4.1.5.*.%d", 0.01},
             .count = EN ".2.3.1.7.*"},
    .OUTLET = {.NAME = {EN ".5.9.1.3.*.%d"},
               .POWER = {EN ".5.9.1.6.*.%d", 1.0},
               .PF = {EN ".5.9.1.7.*.%d", 0.01},
               .CURRENT = {EN ".5.9.1.5.*.%d", 0.01},
               .ENERGY = {EN ".5.9.1.11.*.%d", KWH_TENTH},
               .count = EN ".2.3.1.5.*"},
};

ERG_VENDOR_PROFILES(enlogic, &enlogic_pdu);
