// SPDX-License-Identifier: GPL-3.0-or-later
/* HPE (HP, Compaq): power distribution in CPQPOWER-MIB, cpqPower =
 * enterprises.232.165. One branch per product line; the sysObjectID names
 * the branch (232.165.<branch>), but some cards send none (the PDU
 * management module) or send it as a string. */
#include "vendors.h"

/* HP PDU Management Module, branch pdu = 232.165.2 (up to 63 modular PDUs
 * behind one module; each managed PDU has one input, mapped to an inlet).
 * pduIdentEntry ...165.2.1.2.1: .2 pduName, .3 pduModel; numOfPdu
 *   ...165.2.1.1.0.
 * pduInputEntry ...165.2.2.1.1: .2 inputVoltage (V), .3 inputCurrent
 *   (0.01 A).
 * pduOutputEntry ...165.2.3.1.1: .4 pduOutputPower (W), .5 NumBreakers.
 * pduOutputBreakerEntry ...165.2.3.2.1, index {pdu}.{breaker} ("*" the PDU):
 *   .2 breakerVoltage (V), .3 breakerCurrent (0.01 A; MIB 1.66 and later:
 *   firmware 1.00.x reports whole amperes in this column).
 * All tables share the PDU index (1-based rows). */
#define HPMM "1.3.6.1.4.1.232.165.2"
static const struct erg_snmp_profile hpe_pdumm = {
    .name = "hpe-pdumm",
    .vendor = "HPE",
    .mib = "CPQPOWER-MIB",
    .sysoids = {HPMM},
    .oid_model = HPMM ".1.2.1.3.1",
    .INLET = {.NAME = {HPMM ".1.2.1.2.%d"},
              .POWER = {HPMM ".3.1.1.4.%d", 1.0},
              .CURRENT = {HPMM ".2.1.1.3.%d", 0.01},
              .VOLTAGE = {HPMM ".2.1.1.2.%d", 1.0},
              .count = HPMM ".1.1.0"},
    .BANK = {.CURRENT = {HPMM ".3.2.1.3.*.%d", 0.01},
             .VOLTAGE = {HPMM ".3.2.1.2.*.%d", 1.0},
             .count = HPMM ".3.1.1.5.*"},
    /* CPQPOWER-MIB 1.66+, breakerCurrent: "firmware 1.00.x reports whole
     * amperes"; the module's sysDescr names its firmware version. */
    .fw = {{"firmware version 1.00.", ERG_PDU_BANK, ERG_Q_CURRENT, 1.0,
            "firmware 1.00.x: breaker current read in whole A, not the MIB's 0.01 A "
            "(CPQPOWER-MIB breakerCurrent)"}},
};

/* HP Intelligent Modular PDU (iPDU), branch mpdu = 232.165.5.
 * mpduIdentEntry ...165.5.1.2.1, index mpduIdentIndex, the core unit (one
 * agent answers for every core of its group, numOfMpdu ...165.5.1.1.0):
 *   .3 mpduModel, .4 mpduName, .19 mpduNumOutlet (core outputs),
 *   .38 mpduTotalPowerWatt (W), .39 mpduTotalPowerVA (VA). Device N is
 *   core N (every core's row read, never assumed 1).
 * Bank = core output / load segment, mpduOutputEntry ...165.5.2.1.1, index
 *   {core}.{output}: the core a "*" arc, every core's outputs read
 *   ("bank:2.3" output 3 of core 2): .6 Voltage (0.1 V), .7 Current
 *   (0.01 A), .8 PowerVA (VA), .9 PowerWatt (W), .10 PowerFactor (0.01),
 *   .13 PowerWattHour (Wh); count mpduNumOutlet of the core.
 * Outlet = smart extension bar outlet, mpduSmExtBarOutletEntry
 *   ...165.5.4.1.1, index {core}.{output}.{bar outlet} (mpduIdentIndex,
 *   mpduOutputIndex, mpduSmExtBarOutletIndex: two "*" arcs, "outlet:1.3.2"
 *   outlet 2 of the bar on core 1's output 3): .5 Voltage (0.1 V), .6
 *   Current (0.01 A), .7 PowerWatt (W), .8 PowerFactor (0.01), .9
 *   DeviceName (the server found behind it, the outlet's name; null when
 *   none), .20 PowerWattHour (Wh). No count (mpduDeviceNumOutlet is per
 *   bar device): the rows found are taken.
 * -1 means not measured throughout. */
#define MPDU "1.3.6.1.4.1.232.165.5"
static const struct erg_snmp_profile hpe_ipdu = {
    .name = "hpe-ipdu",
    .vendor = "HPE",
    .mib = "CPQPOWER-MIB",
    .sysoids = {MPDU},
    .oid_model = MPDU ".1.2.1.3.1",
    .DEVICE = {.NAME = {MPDU ".1.2.1.4.%d"},
               .POWER = {MPDU ".1.2.1.38.%d", 1.0},
               .VA = {MPDU ".1.2.1.39.%d", 1.0}},
    .BANK = {.POWER = {MPDU ".2.1.1.9.*.%d", 1.0},
             .VA = {MPDU ".2.1.1.8.*.%d", 1.0},
             .PF = {MPDU ".2.1.1.10.*.%d", 0.01},
             .CURRENT = {MPDU ".2.1.1.7.*.%d", 0.01},
             .VOLTAGE = {MPDU ".2.1.1.6.*.%d", 0.1},
             .ENERGY = {MPDU ".2.1.1.13.*.%d", WH},
             .count = MPDU ".1.2.1.19.*"},
    .OUTLET = {.NAME = {MPDU ".4.1.1.9.*.*.%d"},
               .POWER = {MPDU ".4.1.1.7.*.*.%d", 1.0},
               .PF = {MPDU ".4.1.1.8.*.*.%d", 0.01},
               .CURRENT = {MPDU ".4.1.1.6.*.*.%d", 0.01},
               .VOLTAGE = {MPDU ".4.1.1.5.*.*.%d", 0.1},
               .ENERGY = {MPDU ".4.1.1.20.*.*.%d", WH}},
};

/* HP monitored/managed PDU (Glandore, Dragonwood), branch pdu2 =
 * 232.165.7; daisy-chained PDUs, index pdu2IdentIndex: a "*" arc, every PDU
 * of the chain read ("outlet:2.5"); device N is PDU N.
 * pdu2IdentEntry ...165.7.1.2.1: .2 Name, .3 Model, .10 InputPhaseCount,
 *   .11 GroupCount, .12 OutletCount.
 * pdu2InputEntry ...165.7.2.1.1 (whole PDU): .4 PowerVA (VA), .5
 *   PowerWatts (W), .6 PowerWattHour (Wh), .8 PowerFactor (0.001).
 * pdu2InputPhaseEntry ...165.7.2.2.1, {pdu}.{phase}: .3 Voltage (mV),
 *   .11 Current (mA), .20 PowerVA, .21 PowerWatts, .22 PowerWattHour (Wh),
 *   .24 PowerFactor (0.001).
 * pdu2GroupEntry ...165.7.3.1.1, {pdu}.{group} (breakers / load segments):
 *   .2 Name, .5 Voltage (mV), .12 Current (mA), .20 PowerVA, .21
 *   PowerWatts, .22 PowerWattHour (Wh), .24 PowerFactor (0.001).
 * pdu2OutletEntry ...165.7.5.1.1, {pdu}.{outlet}: .2 Name, .5 Current
 *   (mA), .13 VA, .14 Watts, .15 Wh, .17 PowerFactor (0.001).
 * Negative values: not available. (pdu2InputPowerFactor's comment says 0.01,
 * its description thousandths like every other pdu2 PF: 0.001 taken.) */
#define PDU2 "1.3.6.1.4.1.232.165.7"
static const struct erg_snmp_profile hpe_pdu2 = {
    .name = "hpe-pdu2",
    .vendor = "HPE",
    .mib = "CPQPOWER-MIB",
    .sysoids = {PDU2},
    .oid_model = PDU2 ".1.2.1.3.1",
    .DEVICE = {.POWER = {PDU2 ".2.1.1.5.%d", 1.0},
               .VA = {PDU2 ".2.1.1.4.%d", 1.0},
               .PF = {PDU2 ".2.1.1.8.%d", 0.001},
               .ENERGY = {PDU2 ".2.1.1.6.%d", WH}},
    .PHASE = {.POWER = {PDU2 ".2.2.1.21.*.%d", 1.0},
              .VA = {PDU2 ".2.2.1.20.*.%d", 1.0},
              .PF = {PDU2 ".2.2.1.24.*.%d", 0.001},
              .CURRENT = {PDU2 ".2.2.1.11.*.%d", 0.001},
              .VOLTAGE = {PDU2 ".2.2.1.3.*.%d", 0.001},
              .ENERGY = {PDU2 ".2.2.1.22.*.%d", WH},
              .count = PDU2 ".1.2.1.10.*"},
    .BANK = {.NAME = {PDU2 ".3.1.1.2.*.%d"},
             .POWER = {PDU2 ".3.1.1.21.*.%d", 1.0},
             .VA = {PDU2 ".3.1.1.20.*.%d", 1.0},
             .PF = {PDU2 ".3.1.1.24.*.%d", 0.001},
             .CURRENT = {PDU2 ".3.1.1.12.*.%d", 0.001},
             .VOLTAGE = {PDU2 ".3.1.1.5.*.%d", 0.001},
             .ENERGY = {PDU2 ".3.1.1.22.*.%d", WH},
             .count = PDU2 ".1.2.1.11.*"},
    .OUTLET = {.NAME = {PDU2 ".5.1.1.2.*.%d"},
               .POWER = {PDU2 ".5.1.1.14.*.%d", 1.0},
               .VA = {PDU2 ".5.1.1.13.*.%d", 1.0},
               .PF = {PDU2 ".5.1.1.17.*.%d", 0.001},
               .CURRENT = {PDU2 ".5.1.1.5.*.%d", 0.001},
               .ENERGY = {PDU2 ".5.1.1.15.*.%d", WH},
               .count = PDU2 ".1.2.1.12.*"},
};

/* HPE metered / switched / metered+switched PDU ("CIS" line, G2), branch
 * pdu3 = 232.165.11; daisy-chained PDUs, index pdu3IdentIndex: a "*" arc,
 * every PDU of the chain read ("outlet:2.5"); device N is PDU N.
 * pdu3IdentEntry ...165.11.1.2.1: .2 Name, .3 Model, .11 InputPhaseCount,
 *   .12 GroupCount, .13 OutletCount.
 * pdu3InputEntry ...165.11.2.1.1 (whole PDU): .4 PowerVA, .5 PowerWatts,
 *   .6 TotalEnergy (kWh, since in service), .9 PowerFactor (0.01). The
 *   descriptions of .4/.5 say 0.001 VA/W, their UNITS comments VA/W;
 *   devices send W (input = sum of the phases and outlets).
 * pdu3InputPhaseEntry ...165.11.2.2.1, {pdu}.{phase}: .3 Voltage (0.1 V),
 *   .11 Current (0.01 A), .19 PowerVA, .20 PowerWatts, .21 PowerWattHour
 *   (kWh), .23 PowerFactor (0.01).
 * pdu3GroupEntry ...165.11.3.1.1, {pdu}.{group}: .2 Name, .5 Voltage
 *   (0.1 V), .12 Current (0.01 A), .19 PowerVA, .20 PowerWatts,
 *   .21 PowerWattHour (kWh), .23 PowerFactor (0.01).
 * pdu3OutletEntry ...165.11.5.1.1, {pdu}.{outlet}: .2 Name, .5 Current
 *   (0.01 A), .12 VA, .13 Watts, .14 Wh (kWh per its description),
 *   .16 PowerFactor (0.01).
 * Negative values: not available. */
#define PDU3 "1.3.6.1.4.1.232.165.11"
static const struct erg_snmp_profile hpe_pdu3 = {
    .name = "hpe-pdu3",
    .vendor = "HPE",
    .mib = "CPQPOWER-MIB",
    .sysoids = {PDU3},
    .oid_model = PDU3 ".1.2.1.3.1",
    .DEVICE = {.POWER = {PDU3 ".2.1.1.5.%d", 1.0},
               .VA = {PDU3 ".2.1.1.4.%d", 1.0},
               .PF = {PDU3 ".2.1.1.9.%d", 0.01},
               .ENERGY = {PDU3 ".2.1.1.6.%d", KWH}},
    .PHASE = {.POWER = {PDU3 ".2.2.1.20.*.%d", 1.0},
              .VA = {PDU3 ".2.2.1.19.*.%d", 1.0},
              .PF = {PDU3 ".2.2.1.23.*.%d", 0.01},
              .CURRENT = {PDU3 ".2.2.1.11.*.%d", 0.01},
              .VOLTAGE = {PDU3 ".2.2.1.3.*.%d", 0.1},
              .ENERGY = {PDU3 ".2.2.1.21.*.%d", KWH},
              .count = PDU3 ".1.2.1.11.*"},
    .BANK = {.NAME = {PDU3 ".3.1.1.2.*.%d"},
             .POWER = {PDU3 ".3.1.1.20.*.%d", 1.0},
             .VA = {PDU3 ".3.1.1.19.*.%d", 1.0},
             .PF = {PDU3 ".3.1.1.23.*.%d", 0.01},
             .CURRENT = {PDU3 ".3.1.1.12.*.%d", 0.01},
             .VOLTAGE = {PDU3 ".3.1.1.5.*.%d", 0.1},
             .ENERGY = {PDU3 ".3.1.1.21.*.%d", KWH},
             .count = PDU3 ".1.2.1.12.*"},
    .OUTLET = {.NAME = {PDU3 ".5.1.1.2.*.%d"},
               .POWER = {PDU3 ".5.1.1.13.*.%d", 1.0},
               .VA = {PDU3 ".5.1.1.12.*.%d", 1.0},
               .PF = {PDU3 ".5.1.1.16.*.%d", 0.01},
               .CURRENT = {PDU3 ".5.1.1.5.*.%d", 0.01},
               .ENERGY = {PDU3 ".5.1.1.14.*.%d", KWH},
               .count = PDU3 ".1.2.1.13.*"},
};

/* HP high-voltage PDU (Apollo), branch hpdu = 232.165.9; one hard-wired
 * input, hpduInputEntry ...165.9.2.1.1 indexed by phase: .4 Voltage
 * (0.1 V), .5 Current (0.01 A), .6 PowerVA, .7 PowerWatt (W), .8
 * PowerFactor (0.01), .11 PowerWattHour (Wh); hpduNumPhase ...165.9.1.1.0;
 * hpduModel ...165.9.1.2.1.3.1. The outlet table's index
 * {NumMonitoredOutlet}.{NumPhase}.{outlet} is not usable here. */
#define HPDU "1.3.6.1.4.1.232.165.9"
static const struct erg_snmp_profile hpe_hpdu = {
    .name = "hpe-hpdu",
    .vendor = "HPE",
    .mib = "CPQPOWER-MIB",
    .sysoids = {HPDU},
    .oid_model = HPDU ".1.2.1.3.1",
    .PHASE = {.POWER = {HPDU ".2.1.1.7.%d", 1.0},
              .VA = {HPDU ".2.1.1.6.%d", 1.0},
              .PF = {HPDU ".2.1.1.8.%d", 0.01},
              .CURRENT = {HPDU ".2.1.1.5.%d", 0.01},
              .VOLTAGE = {HPDU ".2.1.1.4.%d", 0.1},
              .ENERGY = {HPDU ".2.1.1.11.%d", WH},
              .count = HPDU ".1.1.0"},
};

ERG_VENDOR_PROFILES(hpe, &hpe_pdu3, &hpe_pdu2, &hpe_ipdu, &hpe_pdumm, &hpe_hpdu);
