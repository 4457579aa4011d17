// SPDX-License-Identifier: GPL-3.0-or-later
/* ALGCOM (PDU-08P-AC and PDU-X). */
#include "vendors.h"

/* PDU-AC-MIB / PDU-X-MIB (pdu = enterprises.49136.200). No tables: every
 * port reading is its own scalar {pdu}.{group}.{port}.0, so the outlet
 * template has the port number in the middle and ".0" after it.
 *   pduGlobal ...1: .1 Model, .2 BusVoltage (mV), .3 BusCurrent (mA),
 *     .4 BusPower (mW).
 *   portName ...2.{p}.0, portVolt ...6.{p}.0 (mV), portCurr ...7.{p}.0
 *     (mA), portPwr ...8.{p}.0 (mW); ports 1..8 on the PDU-08P. */
#define ALG "1.3.6.1.4.1.49136.200"
static const struct erg_snmp_profile algcom_pdu = {
    .name = "algcom-pdu",
    .vendor = "ALGCOM",
    .mib = "PDU-AC-MIB / PDU-X-MIB",
    .sysoids = {ALG},
    .oid_model = ALG ".1.1.0",
    .DEVICE = {.POWER = {ALG ".1.4.0", 0.001},
               .CURRENT = {ALG ".1.3.0", 0.001},
               .VOLTAGE = {ALG ".1.2.0", 0.001}},
    .OUTLET = {.NAME = {ALG ".2.%d.0"},
               .POWER = {ALG ".8.%d.0", 0.001},
               .CURRENT = {ALG ".7.%d.0", 0.001},
               .VOLTAGE = {ALG ".6.%d.0", 0.001}},
};

ERG_VENDOR_PROFILES(algcom, &algcom_pdu);
