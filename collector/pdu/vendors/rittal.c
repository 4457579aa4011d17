// SPDX-License-Identifier: GPL-3.0-or-later
/* Rittal (CMC-III based PDUs: PDU metered/switched/managed, PDU-Controller,
 * inline meters; sysObjectID 2606.7). */
#include "vendors.h"

/* RITTAL-CMC-III-MIB (cmcIII = enterprises.2606.7). A CMC-III unit has no
 * PDU tables: every reading is one row of the generic variable table
 *   cmcIIIVarTable ...7.4.2.2, cmcIIIVarEntry ...7.4.2.2.1, INDEX
 *   {cmcIIIVarDeviceIndex, cmcIIIVarIndex}:
 *   .3 cmcIIIVarName (DisplayString, "Phase L1.Power.Active.Value"),
 *   .5 cmcIIIVarUnit ("W", "kWh", "A", "V", "VA"; "" for a power factor),
 *   .7 cmcIIIVarScale (Integer32: -100 divide by 100, +100 multiply by 100,
 *      0 as is), .10 cmcIIIVarValueStr (the value as text, with its unit;
 *      a label for the *.DescName rows), .11 cmcIIIVarValueInt (Integer32).
 * The variable index is the variable's position in its device's list
 * (model, phases, sockets and configuration move it) and the device index
 * is the device's place on the unit's CAN bus (a PDU-Controller is device
 * 1 with its own I/O, its metering device 2; a PDU-MAN is device 1), so
 * the profile names variables (col.var) and the driver finds their rows
 * (snmp_names.c): names as the PDUs list them, per level:
 *   device  "Total.Power.Active.Value", "Total.Energy.Active.Value"
 *           (older firmware and PDU-MAN: "Unit." instead of "Total.");
 *           "...Energy.Active Custom.Value" is the user-resettable counter
 *           and "...Runtime.Value" its seconds: not used;
 *   phase   "Phase L1".."Phase L3": ".Power.Active.Value" W,
 *           ".Power.Apparent.Value" VA, ".Power.Factor.Value" (scale -100;
 *           negative on some units: then read as missing, watts are
 *           measured anyway), ".Current.Value" A, ".Voltage.Value" V,
 *           ".Energy.Active.Value" kWh (scale -10);
 *   outlet  "Sockets.Socket 01".."Sockets.Socket NN" (two digits) on
 *           managed PDUs: the same ".Power.*", ".Current.Value" and
 *           ".Energy.Active.Value" as a phase, no voltage (the driver
 *           borrows phase L1's); ".General.DescName" is the socket's
 *           user-set name (its text, column .10). Switched-only PDUs list
 *           ".General.*" only: no outlet readings then.
 * Fuses ("Phase L1.Fuses.Fuse 1.*") have a status only: no bank level.
 * A second metering device with the same names (a CAN bus with two PDUs)
 * is not read: the first device's rows win.
 * cmcIIILastChangeNumberOfVars ...7.4.2.1.2.0 (Unsigned32, uptime seconds
 * of the last change in the number of variables) is the stamp: when it
 * moves, the rows are looked up again. cmcIIIDevTable ...7.4.1.2.1 (.2
 * cmcIIIDevName "PDU-Controller", "PDU-MAN") is not needed: the names are
 * looked for on every device. */
#define CMC3 "1.3.6.1.4.1.2606.7"
#define CMC3_VAR CMC3 ".4.2.2.1"
static const struct erg_snmp_names cmc3_vars = {
    .name = CMC3_VAR ".3",
    .value = CMC3_VAR ".11",
    .scale = CMC3_VAR ".7",
    .unit = CMC3_VAR ".5",
    .text = CMC3_VAR ".10",
    .stamp = CMC3 ".4.2.1.2.0",
};
/* A named variable: its name, the unit it must be in, raw (after the row's
 * own scale) -> SI unit. */
#define CMC3_V(name, u, sc)                                                                        \
  { .var = name, .unit = u, .scale = sc }
#define CMC3_PH "Phase L%d."
#define CMC3_SO "Sockets.Socket %d."
static const struct erg_snmp_profile rittal_cmc3 = {
    .name = "rittal-cmc3",
    .vendor = "Rittal",
    .mib = "RITTAL-CMC-III-MIB",
    .sysoids = {CMC3},
    .names = &cmc3_vars,
    .DEVICE = {.POWER = CMC3_V("Total.Power.Active.Value|Unit.Power.Active.Value", "W", 1.0),
               .ENERGY = CMC3_V("Total.Energy.Active.Value|Unit.Energy.Active.Value", "kWh", KWH)},
    .PHASE = {.POWER = CMC3_V(CMC3_PH "Power.Active.Value", "W", 1.0),
              .VA = CMC3_V(CMC3_PH "Power.Apparent.Value", "VA", 1.0),
              .PF = CMC3_V(CMC3_PH "Power.Factor.Value", "", 1.0),
              .CURRENT = CMC3_V(CMC3_PH "Current.Value", "A", 1.0),
              .VOLTAGE = CMC3_V(CMC3_PH "Voltage.Value", "V", 1.0),
              .ENERGY = CMC3_V(CMC3_PH "Energy.Active.Value", "kWh", KWH),
              .max = 3},
    .OUTLET = {.NAME = {.var = CMC3_SO "General.DescName"},
               .POWER = CMC3_V(CMC3_SO "Power.Active.Value", "W", 1.0),
               .VA = CMC3_V(CMC3_SO "Power.Apparent.Value", "VA", 1.0),
               .PF = CMC3_V(CMC3_SO "Power.Factor.Value", "", 1.0),
               .CURRENT = CMC3_V(CMC3_SO "Current.Value", "A", 1.0),
               .ENERGY = CMC3_V(CMC3_SO "Energy.Active.Value", "kWh", KWH)},
};

ERG_VENDOR_PROFILES(rittal, &rittal_cmc3);
