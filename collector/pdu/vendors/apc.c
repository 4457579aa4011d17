// SPDX-License-Identifier: GPL-3.0-or-later
/* APC / Schneider Electric. */
#include "vendors.h"

/* PowerNet-MIB (v4.5.x), rPDU2 branch (enterprises.318.1.1.26): Rack PDU 2G
 * (AP8xxx, AP7xxxB, ...). Every rPDU2 table is indexed by a row number that
 * runs over all units of a daisy chain / NPS group (a Module column says
 * which unit); the host unit's rows come first, the guests' follow, so the
 * entity number is the row number. No level has a count: the counts
 * (rPDU2DevicePropertiesEntry ...26.4.2.1.{n}.{unit}: .6
 * NumMeteredOutlets, .7 NumPhases, .8 NumMeteredBanks) are per unit, and
 * the host's would cut the guests' rows; the rows found are taken.
 * -1 means "not supported by this model" throughout.
 * Device: rPDU2DeviceStatusEntry ...26.4.3.1.{col}.{n}, one row per unit
 *   of the chain (device 2 is the second unit): .5 Power
 *   (hundredths of kW), .16 ApparentPower (hundredths of kVA), .17
 *   PowerFactor (hundredths), .9 Energy (tenths of kWh, user resettable).
 * Phase: rPDU2PhaseStatusEntry ...26.6.3.1: .5 Current (tenths of A),
 *   .6 Voltage (V), .7 Power (hundredths of kW), .8 ApparentPower
 *   (hundredths of kVA), .9 PowerFactor (hundredths).
 * Bank: rPDU2BankStatusEntry ...26.8.3.1: .5 Current (tenths of A) only.
 * Outlet: rPDU2OutletMeteredStatusEntry ...26.9.4.3.1: .3 Name, .6 Current
 *   (tenths of A), .7 Power (W), .11 Energy (tenths of kWh).
 * Model: rPDU2IdentModelNumber ...26.2.1.8.1.
 * sysObjectID: masterSwitchrPDU2 1.3.6.1.4.1.318.1.3.4.6 (and other
 * masterSwitch family members: the old rPDU branch below shares them). Models
 * that meter only current (AP79xxB switched units: rPDU2DeviceStatusPower
 * and rPDU2PhaseStatusVoltage read -1) get their power from apc-rpdu. */
#define R2 "1.3.6.1.4.1.318.1.1.26"
static const struct erg_snmp_profile apc_rpdu2 = {
    .name = "apc-rpdu2",
    .vendor = "APC/Schneider",
    .mib = "PowerNet-MIB rPDU2",
    .sysoids = {"1.3.6.1.4.1.318.1.3.4.6", "1.3.6.1.4.1.318.1.3.4"},
    .oid_model = R2 ".2.1.8.1",
    .DEVICE = {.POWER = {R2 ".4.3.1.5.%d", 10.0},
               .VA = {R2 ".4.3.1.16.%d", 10.0},
               .PF = {R2 ".4.3.1.17.%d", 0.01},
               .ENERGY = {R2 ".4.3.1.9.%d", KWH_TENTH}},
    .PHASE = {.POWER = {R2 ".6.3.1.7.%d", 10.0},
              .VA = {R2 ".6.3.1.8.%d", 10.0},
              .PF = {R2 ".6.3.1.9.%d", 0.01},
              .CURRENT = {R2 ".6.3.1.5.%d", 0.1},
              .VOLTAGE = {R2 ".6.3.1.6.%d", 1.0}},
    .BANK = {.CURRENT = {R2 ".8.3.1.5.%d", 0.1}},
    .OUTLET = {.NAME = {R2 ".9.4.3.1.3.%d"},
               .POWER = {R2 ".9.4.3.1.7.%d", 1.0},
               .CURRENT = {R2 ".9.4.3.1.6.%d", 0.1},
               .ENERGY = {R2 ".9.4.3.1.11.%d", KWH_TENTH}},
};

/* PowerNet-MIB, the older rPDU branch (enterprises.318.1.1.12): first
 * generation rack PDUs (AP78xx/AP79xx), still served by rPDU2 firmware.
 * Device (scalars): rPDUIdentDevicePowerWatts ...12.1.16.0 (W),
 *   rPDUIdentDevicePowerVA ...12.1.18.0 (VA), rPDUIdentDevicePowerFactor
 *   ...12.1.17.0 (thousandths), rPDUIdentDeviceLinetoLineVoltage ...12.1.15.0
 *   (V: the nominal line voltage configured on AP7xxx units, from which the
 *   PDU itself computes PowerWatts; -1 elsewhere. The phase level borrows
 *   it: right on single-phase units, line-to-line on three-phase ones).
 * Phase: rPDULoadStatusEntry ...12.2.3.1.1: .2 Load (tenths of A). The
 *   table holds the phases first, then the banks (rPDULoadStatusBankNumber
 *   .5 is 0 on phase rows); count rPDULoadDevNumPhases ...12.2.1.2.0 keeps
 *   the level to the phase rows. The bank rows (row nphases+k = bank k)
 *   cannot be expressed as a level here; rPDU2 gives banks.
 * Outlet: rPDUOutletStatusEntry ...12.3.5.1.1: .7 Load (tenths of A, only
 *   on outlet-monitored models), count rPDUOutletDevNumTotalOutlets
 *   ...12.3.1.4.0. Its name column (.2 rPDUOutletStatusOutletName) is left
 *   out on purpose: it lists every outlet of every switched unit, so the
 *   level would "answer" on units that meter no outlet and outvote rPDU2.
 * Model: rPDUIdentModelNumber ...12.1.5.0. sysObjectID: masterSwitchrPDU
 * 1.3.6.1.4.1.318.1.3.4.5, masterSwitchrPDUB ...4.8 (AP79xxB: current-only
 * metering, so this branch's PowerWatts is their only power). */
#define R1 "1.3.6.1.4.1.318.1.1.12"
static const struct erg_snmp_profile apc_rpdu = {
    .name = "apc-rpdu",
    .vendor = "APC/Schneider",
    .mib = "PowerNet-MIB rPDU",
    .sysoids = {"1.3.6.1.4.1.318.1.3.4.8", "1.3.6.1.4.1.318.1.3.4.5", "1.3.6.1.4.1.318.1.3.4"},
    .oid_model = R1 ".1.5.0",
    .DEVICE = {.POWER = {R1 ".1.16.0", 1.0},
               .VA = {R1 ".1.18.0", 1.0},
               .PF = {R1 ".1.17.0", 0.001},
               .VOLTAGE = {R1 ".1.15.0", 1.0}},
    .PHASE = {.CURRENT = {R1 ".2.3.1.1.2.%d", 0.1}, .count = R1 ".2.1.2.0"},
    .OUTLET = {.CURRENT = {R1 ".3.5.1.1.7.%d", 0.1}, .count = R1 ".3.1.4.0"},
};

/* PowerNet-MIB, ePDU branch (enterprises.318.1.1.30): APC Easy PDU (EPDU1xxx
 * metered/switched). Rows are indexed by a row number over the daisy chain,
 * host unit first (unit 1 for the device scalars).
 * Device: ePDUDeviceStatusEntry ...30.2.1.1.{col}.1: .7 ActivePower (W),
 *   .9 ApparentPower (VA), .10 PowerFactor (0.1 %, i.e. thousandths),
 *   .11 Energy (Wh); .4 ModelNumber; .6 NumPhases.
 * Phase: ePDUPhaseStatusEntry ...30.4.2.1: .4 Voltage (0.1 V), .5 Current
 *   (0.01 A), .6 ActivePower (W), .8 ApparentPower (VA), .9 PowerFactor
 *   (0.1 %), .10 Energy (Wh).
 * Outlets (ePDUOutletStatusEntry ...30.6.1.1) carry only their on/off state.
 * sysObjectID: masterSwitchePDU 1.3.6.1.4.1.318.1.3.4.9. */
#define EZ "1.3.6.1.4.1.318.1.1.30"
static const struct erg_snmp_profile apc_epdu = {
    .name = "apc-epdu",
    .vendor = "APC/Schneider",
    .mib = "PowerNet-MIB ePDU",
    .sysoids = {"1.3.6.1.4.1.318.1.3.4.9"},
    .oid_model = EZ ".2.1.1.4.1",
    .DEVICE = {.POWER = {EZ ".2.1.1.7.1", 1.0},
               .VA = {EZ ".2.1.1.9.1", 1.0},
               .PF = {EZ ".2.1.1.10.1", 0.001},
               .ENERGY = {EZ ".2.1.1.11.1", WH}},
    .PHASE = {.POWER = {EZ ".4.2.1.6.%d", 1.0},
              .VA = {EZ ".4.2.1.8.%d", 1.0},
              .PF = {EZ ".4.2.1.9.%d", 0.001},
              .CURRENT = {EZ ".4.2.1.5.%d", 0.01},
              .VOLTAGE = {EZ ".4.2.1.4.%d", 0.1},
              .ENERGY = {EZ ".4.2.1.10.%d", WH},
              .count = EZ ".2.1.1.6.1"},
};

ERG_VENDOR_PROFILES(apc, &apc_rpdu2, &apc_rpdu, &apc_epdu);
