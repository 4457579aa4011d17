/* Eaton nLogic ePDUs (enterprises.534.7.1). */
#include "vendors.h"

/* EATON-PDU-NLOGIC (no MIB file was at hand: object names, OIDs and a
 * device's walk from NUT's eaton-pdu-nlogic-mib.c, written by Eaton in
 * 2022; sysObjectID 1.3.6.1.4.1.534.7.1). Every table is indexed from
 * pduIdentIndex, the PDU of the daisy chain (pduNumberPDU ...7.1.1.1.0):
 * a "*" arc (device N is PDU N; "outlet:2.5" outlet 5 of PDU 2).
 * Units, from NUT's scales and the walk's values: currents 0.01 A
 * (pduInputPhaseCurrentRating 2400 on a "24A" model), voltages 0.1 V
 * (2418; thresholds 1900..2250), VA and W whole.
 * DEVICE  pduInputEntry ...7.1.2.1.1.{col}.{pdu}: .4 PowerVA, .5
 *   PowerWatts, .11 TotalCurrent (0.01 A); pduName ...7.1.1.2.1.2.
 * PHASE   pduInputPhaseEntry ...7.1.2.2.1.{col}.{pdu}.{phase}: .3 Voltage
 *   (0.1 V), .11 Current (0.01 A), .19 PowerVA, .20 PowerWatts. Rows 2 and
 *   3 exist, zero, on a single-phase PDU: count pduInputPhaseCount
 *   ...7.1.1.2.1.11.{pdu}.
 * OUTLET  pduOutletEntry ...7.1.5.1.1.{col}.{pdu}.{outlet}: .2 Name, .5
 *   Current (0.01 A), .12 VA, .13 Watts; count pduOutletCount
 *   ...7.1.1.2.1.13.{pdu}.
 * Not read (no unit established): energies (pduInputTotalEnergy .6,
 * pduInputPhasePowerWattHour .21), power factors (.9, .23), and the
 * groups' current (pduGroupCurrent ...7.1.3.1.1.12, which NUT reads
 * unscaled unlike every other current). pduModel ...7.1.1.2.1.3.1. */
#define NL "1.3.6.1.4.1.534.7.1"
static const struct erg_snmp_profile eaton_nlogic = {
    .name = "eaton-nlogic",
    .vendor = "Eaton",
    .mib = "EATON-PDU-NLOGIC (per NUT)",
    .sysoids = {NL},
    .oid_model = NL ".1.2.1.3.1",
    .DEVICE = {.NAME = {NL ".1.2.1.2.%d"},
               .POWER = {NL ".2.1.1.5.%d", 1.0},
               .VA = {NL ".2.1.1.4.%d", 1.0},
               .CURRENT = {NL ".2.1.1.11.%d", 0.01}},
    .PHASE = {.POWER = {NL ".2.2.1.20.*.%d", 1.0},
              .VA = {NL ".2.2.1.19.*.%d", 1.0},
              .CURRENT = {NL ".2.2.1.11.*.%d", 0.01},
              .VOLTAGE = {NL ".2.2.1.3.*.%d", 0.1},
              .count = NL ".1.2.1.11.*"},
    .OUTLET = {.NAME = {NL ".5.1.1.2.*.%d"},
               .POWER = {NL ".5.1.1.13.*.%d", 1.0},
               .VA = {NL ".5.1.1.12.*.%d", 1.0},
               .CURRENT = {NL ".5.1.1.5.*.%d", 0.01},
               .count = NL ".1.2.1.13.*"},
};

ERG_VENDOR_PROFILES(eaton_nlogic, &eaton_nlogic);
