// SPDX-License-Identifier: GPL-3.0-or-later
/* APC Easy PDU, early firmware. */
#include "vendors.h"

/* APC Easy PDU (EPDU1xxx) firmware before PowerNet-MIB's ePDU branch
 * (apc-epdu): sysObjectID 1.3.6.1.4.1.0, snmpEngineID "APC" (how LibreNMS
 * tells the family: os_detection/apc-epdu.yaml), readings as text WITH
 * their unit in a table under enterprises.1 (which is not APC's arc) for
 * which no MIB is published. The layout below is the one the device
 * serves (recording apc-epdu_epdu1132m, firmware "Ver11.10" at .38.1),
 * row .1 on that single-phase unit, one row of the whole input; what other
 * row numbers would be on a three-phase model is not documented, so the
 * level is the inlet and the row number the entity:
 *   ...1.1.1.{row}  voltage,  text "232.6V"
 *   ...1.1.2.{row}  current,  text "0.30A"
 *   ...1.1.3.{row}  active power, text "0.061kW"
 *   ...1.1.6.{row}  power factor, text "0.856" (no unit)
 *   ...1.1.7.{row}  active energy, text "2.28kWh"
 *   (.27 frequency "49.982Hz", .41-.44 voltage and current limits,
 *   .53-.56 sensor limits, .38 firmware version: not read.)
 * Each value must be a number followed by exactly its unit, with or
 * without an SI prefix (m, k, M): the prefix decides the scale ("0.061kW"
 * is 61 W, "61W" would be too); any other text ("-", "N/A",
 * "12<script>", a number without its unit) is no reading. */
#define EZ1 "1.3.6.1.4.1.1.1"
static const struct erg_snmp_profile apc_epdu_text = {
    .name = "apc-epdu-text",
    .vendor = "APC/Schneider",
    .mib = "Easy PDU early fw (enterprises.1, text)",
    .INLET = {.POWER = {EZ1 ".3.%d", 1.0, .unit = "W"},
              .PF = {EZ1 ".6.%d", 1.0, .unit = ""},
              .CURRENT = {EZ1 ".2.%d", 1.0, .unit = "A"},
              .VOLTAGE = {EZ1 ".1.%d", 1.0, .unit = "V"},
              .ENERGY = {EZ1 ".7.%d", WH, .unit = "Wh"},
              .max = 3},
};

ERG_VENDOR_PROFILES(apc_easy, &apc_epdu_text);
