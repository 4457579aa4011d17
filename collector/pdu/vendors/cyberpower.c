// SPDX-License-Identifier: GPL-3.0-or-later
/* CyberPower. */
#include "vendors.h"

/* CPS-MIB (v2.11 to v2.13), ePDU2 branch (enterprises.3808.1.1.6): current
 * switched/metered PDUs (PDU81xxx, PDU41xxx with recent firmware). Tables
 * are indexed by a row number over the daisy chain (a ModuleIndex column
 * says which unit); the host unit's rows come first, so the entity number is
 * the row number and the counts are the host's (ePDU2DeviceInfoEntry
 * ...6.3.3.1.{n}.1: .7 MeteredOutlets, .8 NumPhases, .9 NumBreakers, the
 * number of metered banks). Values are Gauge32.
 * Device: ePDU2DeviceStatusEntry ...6.3.4.1.{col}.1: .18 PowerLoad (W),
 *   .15 ApparentPower (VA), .16 PowerFactor (hundredths), .5 CurrentLoad
 *   (tenths of A), .9 Energy (tenths of kWh, user resettable).
 * Phase: ePDU2PhaseStatusEntry ...6.4.4.1: .5 Load (tenths of A), .6 Voltage
 *   (tenths of V), .7 Power (W), .8 ApparentPower (VA), .9 PowerFactor
 *   (hundredths).
 * Bank: ePDU2BankStatusEntry ...6.5.4.1: .5 Load (tenths of A) only.
 * Outlet: ePDU2OutletMeteredStatusEntry ...6.6.2.4.1: .4 Name, .6 Load
 *   (tenths of A), .7 ActivePower (W), .11 Energy (tenths of kWh).
 * Model: ePDU2IdentModelName ...6.2.2.1.9.1. */
#define CP2 "1.3.6.1.4.1.3808.1.1.6"
static const struct erg_snmp_profile cyberpower_epdu2 = {
    .name = "cyberpower-epdu2",
    .vendor = "CyberPower",
    .mib = "CPS-MIB ePDU2",
    .sysoids = {"1.3.6.1.4.1.3808.1.1.6", "1.3.6.1.4.1.3808"},
    .oid_model = CP2 ".2.2.1.9.1",
    .DEVICE = {.POWER = {CP2 ".3.4.1.18.1", 1.0},
               .VA = {CP2 ".3.4.1.15.1", 1.0},
               .PF = {CP2 ".3.4.1.16.1", 0.01},
               .CURRENT = {CP2 ".3.4.1.5.1", 0.1},
               .ENERGY = {CP2 ".3.4.1.9.1", KWH_TENTH}},
    .PHASE = {.POWER = {CP2 ".4.4.1.7.%d", 1.0},
              .VA = {CP2 ".4.4.1.8.%d", 1.0},
              .PF = {CP2 ".4.4.1.9.%d", 0.01},
              .CURRENT = {CP2 ".4.4.1.5.%d", 0.1},
              .VOLTAGE = {CP2 ".4.4.1.6.%d", 0.1},
              .count = CP2 ".3.3.1.8.1"},
    .BANK = {.CURRENT = {CP2 ".5.4.1.5.%d", 0.1}, .count = CP2 ".3.3.1.9.1"},
    .OUTLET = {.NAME = {CP2 ".6.2.4.1.4.%d"},
               .POWER = {CP2 ".6.2.4.1.7.%d", 1.0},
               .CURRENT = {CP2 ".6.2.4.1.6.%d", 0.1},
               .ENERGY = {CP2 ".6.2.4.1.11.%d", KWH_TENTH},
               .count = CP2 ".3.3.1.7.1"},
};

/* CPS-MIB, ePDU branch (enterprises.3808.1.1.3): older CyberPower PDUs.
 * Phase: ePDULoadStatusEntry ...3.2.3.1.1: .2 Load (tenths of A), .6 Voltage
 *   (0.1 V), .7 ActivePower (W), .8 ApparentPower (VA), .9 PowerFactor
 *   (hundredths), .10 Energy (0.1 kWh; the MIB's text says "apparent power"
 *   but gives kWh). The table holds the phases first, then the banks
 *   (ePDULoadStatusBankNumber .5 is 0 on phase rows); count
 *   ePDULoadDevNumPhases ...3.2.1.2.0 keeps the level to the phase rows.
 *   The bank rows (row nphases+k = bank k) cannot be expressed as a level.
 * Outlet: ePDUOutletStatusEntry ...3.3.5.1.1: .2 OutletName, .7 Load (tenths
 *   of A), .8 ActivePower (W), .13 Energy (tenths of kWh); metered only on
 *   outlet-monitored models. count ePDUOutletDevNumTotalOutlets ...3.3.1.4.0.
 * No device level: the branch has no device power, only the input voltage
 * ePDUStatusInputVoltage ...3.5.7.0 (0.1 V), which phase 1 also gives.
 * Model: ePDUIdentModelNumber ...3.1.5.0. */
#define CP1 "1.3.6.1.4.1.3808.1.1.3"
static const struct erg_snmp_profile cyberpower_epdu = {
    .name = "cyberpower-epdu",
    .vendor = "CyberPower",
    .mib = "CPS-MIB ePDU",
    .sysoids = {"1.3.6.1.4.1.3808.1.1.3", "1.3.6.1.4.1.3808"},
    .oid_model = CP1 ".1.5.0",
    .PHASE = {.POWER = {CP1 ".2.3.1.1.7.%d", 1.0},
              .VA = {CP1 ".2.3.1.1.8.%d", 1.0},
              .PF = {CP1 ".2.3.1.1.9.%d", 0.01},
              .CURRENT = {CP1 ".2.3.1.1.2.%d", 0.1},
              .VOLTAGE = {CP1 ".2.3.1.1.6.%d", 0.1},
              .ENERGY = {CP1 ".2.3.1.1.10.%d", KWH_TENTH},
              .count = CP1 ".2.1.2.0"},
    .OUTLET = {.NAME = {CP1 ".3.5.1.1.2.%d"},
               .POWER = {CP1 ".3.5.1.1.8.%d", 1.0},
               .CURRENT = {CP1 ".3.5.1.1.7.%d", 0.1},
               .ENERGY = {CP1 ".3.5.1.1.13.%d", KWH_TENTH},
               .count = CP1 ".3.1.4.0"},
};

ERG_VENDOR_PROFILES(cyberpower, &cyberpower_epdu2, &cyberpower_epdu);
