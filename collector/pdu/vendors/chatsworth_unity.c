// SPDX-License-Identifier: GPL-3.0-or-later
/* Chatsworth Products (CPI): eConnect PDUs, "unity" firmware. */
#include "vendors.h"

/* CPI-UNITY-MIB (2019), unity branch econnect = enterprises.30932.1.10.1,
 * which eConnect firmware 5.x answers instead of the legacy metrics
 * (chatsworth-econnect). Every table is indexed {entity id, PDU MAC}, the
 * MAC as a string index AFTER the entity number (12 characters:
 * ".12.48.48.48.69.68..." is "000ED..."), one set of rows per PDU of the
 * daisy chain. The MAC is the index tail ("*" last): per level, the PDU of
 * the level's first row (recording chatsworth-pdu: its branches are one
 * PDU's, its metered outlets another's; the probe says which per level).
 * DEVICE  cpiPduTable ...10.1.2.10.1.{col}.{mac}: .16 cpiPduTotalPower
 *         ("power in volt-amps for the entire PDU").
 * BANK    cpiPduBranchTable ...10.1.3.110.1.{col}.{branch}.{mac}: .3
 *         Current (1/100 A), .5 Voltage (1/10 V), .6 Power (volt-amps).
 *         (.7 PowerFactor gives no unit and .9 Energy counts apparent
 *         energy, decaVA-seconds: neither is read.)
 * OUTLET  cpiPduOutletTable ...10.1.4.10.1.{col}.{outlet}.{mac}: .4 Name,
 *         .6 Current (1/100 A), .7 Voltage (1/10 V), .8 Power (volt-amps),
 *         .10 Energy (Counter64, decawatt-seconds: "divide by 360 to obtain
 *         Watt-hr", 10 J).
 * No column gives active power: W is VA x the source's power_factor
 * (estimated). The lines table (...10.1.3.10) gives current only: not a
 * level here. sysObjectID of these units is not a CPI OID (the recording:
 * ".0.10.43.6.1.4.1"); the tables find them. */
#define CU "1.3.6.1.4.1.30932.1.10.1"
static const struct erg_snmp_profile chatsworth_unity = {
    .name = "chatsworth-unity",
    .vendor = "Chatsworth Products",
    .mib = "CPI-UNITY-MIB",
    .sysoids = {"1.3.6.1.4.1.30932"},
    .oid_model = "1.3.6.1.4.1.30932.1.1.1.2.0", /* legacy modelCode, still answered */
    .DEVICE = {.VA = {CU ".2.10.1.16.*", 1.0}},
    .BANK = {.VA = {CU ".3.110.1.6.%d.*", 1.0},
             .CURRENT = {CU ".3.110.1.3.%d.*", 0.01},
             .VOLTAGE = {CU ".3.110.1.5.%d.*", 0.1}},
    .OUTLET = {.NAME = {CU ".4.10.1.4.%d.*"},
               .VA = {CU ".4.10.1.8.%d.*", 1.0},
               .CURRENT = {CU ".4.10.1.6.%d.*", 0.01},
               .VOLTAGE = {CU ".4.10.1.7.%d.*", 0.1},
               .ENERGY = {CU ".4.10.1.10.%d.*", 10.0}},
};

ERG_VENDOR_PROFILES(chatsworth_unity, &chatsworth_unity);
