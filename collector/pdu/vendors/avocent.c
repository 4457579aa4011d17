/* Avocent (Vertiv) PM series PDUs (PM1000/2000/3000, Cyclades PM). */
#include "vendors.h"

/* PM-MIB (Avocent, revision 2.0.1, 2010; pm = enterprises.10418.17,
 * pmPowerMgmt = pm.2.5). One appliance manages chains of PDUs on its
 * serial ports (pmPowerMgmtSerialTable: NumberPDUs per port); every
 * table is indexed from {serial port}.{PDU position in the chain}, never
 * assumed 1: the port a "*" arc (inlets), port and PDU two "*" arcs
 * (phases, outlets). Each PDU is an inlet, as behind a management module
 * ("inlet:1.2" is the second PDU on serial port 1; "outlet:1.2.5" its
 * outlet 5). Every reading "returns 0 if not supported"; the *Type columns
 * (.65 power, .75 voltage, .85 PF: none-sensor 0, estimated 1, measured 2)
 * say which, and are not read.
 * INLET   pmPowerMgmtPDUTableEntry ...2.5.3.1, index {port}.{pdu}: .3
 *   PduId (the PDU's name), .5 Model, .8 NumberOfOutlets, .50 CurrentValue
 *   (A x 10), .60 PowerValue (W x 10), .70 VoltageValue (V), .80
 *   PowerFactorValue (Pf x 100), .105 EnergyValue (Wh). (.10-.36, the
 *   per-sensor Current1..Voltage3 columns, are obsolete.)
 * PHASE   pmPowerMgmtPhasesTableEntry ...2.5.9.1, index
 *   {port}.{pdu}.{phase}: .4 Name, .50 CurrentValue (A x 10), .60
 *   PowerValue (W x 10), .70 VoltageValue (V).
 * OUTLET  pmPowerMgmtOutletsTableEntry ...2.5.5.1, index
 *   {port}.{pdu}.{outlet}: .4 Name, .50 CurrentValue (A x 10), .60
 *   PowerValue (W x 10), .70 VoltageValue (V), .80 PowerFactorValue
 *   (Pf x 100), .105 EnergyValue (Wh); count: the PDU's NumberOfOutlets.
 * pmProductModel ...2.1.2.0; sysObjectID pmProducts ...17.1.<model>
 * (pm3024 = 17.1.7). */
#define PM "1.3.6.1.4.1.10418.17.2.5"
static const struct erg_snmp_profile avocent_pm = {
    .name = "avocent-pm",
    .vendor = "Avocent/Vertiv",
    .mib = "PM-MIB",
    .sysoids = {"1.3.6.1.4.1.10418.17"},
    .oid_model = "1.3.6.1.4.1.10418.17.2.1.2.0",
    .INLET = {.NAME = {PM ".3.1.3.*.%d"},
              .POWER = {PM ".3.1.60.*.%d", 0.1},
              .PF = {PM ".3.1.80.*.%d", 0.01},
              .CURRENT = {PM ".3.1.50.*.%d", 0.1},
              .VOLTAGE = {PM ".3.1.70.*.%d", 1.0},
              .ENERGY = {PM ".3.1.105.*.%d", WH}},
    .PHASE = {.NAME = {PM ".9.1.4.*.*.%d"},
              .POWER = {PM ".9.1.60.*.*.%d", 0.1},
              .CURRENT = {PM ".9.1.50.*.*.%d", 0.1},
              .VOLTAGE = {PM ".9.1.70.*.*.%d", 1.0}},
    .OUTLET = {.NAME = {PM ".5.1.4.*.*.%d"},
               .POWER = {PM ".5.1.60.*.*.%d", 0.1},
               .PF = {PM ".5.1.80.*.*.%d", 0.01},
               .CURRENT = {PM ".5.1.50.*.*.%d", 0.1},
               .VOLTAGE = {PM ".5.1.70.*.*.%d", 1.0},
               .ENERGY = {PM ".5.1.105.*.*.%d", WH},
               .count = PM ".3.1.8.*.*"},
};

ERG_VENDOR_PROFILES(avocent, &avocent_pm);
