// SPDX-License-Identifier: GPL-3.0-or-later
/* GUDE Systems (Expert Power Control, Expert PDU). */
#include "vendors.h"

/* GUDEADS-<product>-MIB: every product has its own subtree
 * P = enterprises.28507.<n> (also its sysObjectID) with the same layout:
 *   P.1.1.2.1.0 ProdName (newer firmware).
 *   Power channels ("lines"): P.1.5.1.1.0 ActivePowerChan (count);
 *   PowerEntry P.1.5.1.2.1.{col}.{n}: .3 AbsEnergyActive (Wh),
 *   .4 PowerActive (W), .5 Current (mA), .6 Voltage (V), .8 PowerFactor
 *   (0.001, -1..1), .10 PowerApparent (VA).
 *   Single-port metering (models that meter every port):
 *   P.1.5.5.1.0 spActivePowerChan; spPowerEntry P.1.5.5.2.1.{col}.{port}
 *   with the same columns.
 * Single-channel products and the two-inlet EPC 8226 (channels = inlets)
 * map the power channels to INLET; the three-phase EPC 8733 maps them to
 * PHASE (lines L1..L3). Not used: PowerEntry .100 LineSensorName and the
 * port names (P.1.3.1.2.1.2): the former is absent on older firmware, the
 * latter lists every relay port, metered or not, and the driver finds rows
 * by the name column when one is given. ChanStatus (.2, 1 = data valid) is
 * not used as a row filter because a row would vanish while its meter is
 * briefly invalid.
 * The Expert Sensor Boxes (ESB 7213 = 28507.66, ESB 7214 = 28507.67) have
 * no power metering in their MIBs and get no profile. */
#define GUDE "1.3.6.1.4.1.28507."
#define GUDE_LINES(p)                                                                              \
  {                                                                                                \
    .POWER = {GUDE #p ".1.5.1.2.1.4.%d", 1.0}, .VA = {GUDE #p ".1.5.1.2.1.10.%d", 1.0},            \
    .PF = {GUDE #p ".1.5.1.2.1.8.%d", 0.001}, .CURRENT = {GUDE #p ".1.5.1.2.1.5.%d", 0.001},       \
    .VOLTAGE = {GUDE #p ".1.5.1.2.1.6.%d", 1.0}, .ENERGY = {GUDE #p ".1.5.1.2.1.3.%d", WH},        \
    .count = GUDE #p ".1.5.1.1.0"                                                                  \
  }
#define GUDE_PORTS(p)                                                                              \
  {                                                                                                \
    .POWER = {GUDE #p ".1.5.5.2.1.4.%d", 1.0}, .VA = {GUDE #p ".1.5.5.2.1.10.%d", 1.0},            \
    .PF = {GUDE #p ".1.5.5.2.1.8.%d", 0.001}, .CURRENT = {GUDE #p ".1.5.5.2.1.5.%d", 0.001},       \
    .VOLTAGE = {GUDE #p ".1.5.5.2.1.6.%d", 1.0}, .ENERGY = {GUDE #p ".1.5.5.2.1.3.%d", WH},        \
    .count = GUDE #p ".1.5.5.1.0"                                                                  \
  }
#define GUDE_HEAD(p, model)                                                                        \
  .name = "gude-epc" #model, .vendor = "GUDE", .mib = "GUDEADS-EPC" #model "-MIB",                 \
  .sysoids = {GUDE #p}, .oid_model = GUDE #p ".1.1.2.1.0"

/* One inlet, no per-port metering. */
#define GUDE_INLET_ONLY(var, p, model)                                                             \
  static const struct erg_snmp_profile var = {GUDE_HEAD(p, model), .INLET = GUDE_LINES(p)}
/* One or two inlets and per-port metering. */
#define GUDE_INLET_PORTS(var, p, model)                                                            \
  static const struct erg_snmp_profile var = {GUDE_HEAD(p, model), .INLET = GUDE_LINES(p),         \
                                              .OUTLET = GUDE_PORTS(p)}

GUDE_INLET_ONLY(gude_epc8221, 56, 8221);  /* EPC 8221/8220 series */
GUDE_INLET_PORTS(gude_epc8226, 58, 8226); /* 2 channels (banks A, B), 12 ports */
GUDE_INLET_ONLY(gude_epc8316, 64, 8316);
GUDE_INLET_ONLY(gude_epc8021, 77, 8021);
GUDE_INLET_ONLY(gude_epc8031, 81, 8031);
GUDE_INLET_ONLY(gude_epc8032, 82, 8032);
GUDE_INLET_PORTS(gude_epc8035, 83, 8035); /* 8 metered ports */
GUDE_INLET_ONLY(gude_epc8041, 85, 8041);
GUDE_INLET_PORTS(gude_epc8045, 87, 8045); /* metered ports */
GUDE_INLET_ONLY(gude_epc8314, 97, 8314);
GUDE_INLET_ONLY(gude_epc8291, 98, 8291);
GUDE_INLET_PORTS(gude_epc8001, 100, 8001);    /* 8 metered ports */
GUDE_INLET_ONLY(gude_epc871310, 109, 871310); /* Expert PDU 8713 */
GUDE_INLET_ONLY(gude_epc871210, 112, 871210); /* Expert PDU 8712 */

/* Expert PDU 8733 (GUDEADS-EPC873300-MIB): PowerIndex 1..3 = L1..L3. */
static const struct erg_snmp_profile gude_epc873300 = {GUDE_HEAD(111, 873300),
                                                       .PHASE = GUDE_LINES(111)};

ERG_VENDOR_PROFILES(gude, &gude_epc8221, &gude_epc8226, &gude_epc8316, &gude_epc8021, &gude_epc8031,
                    &gude_epc8032, &gude_epc8035, &gude_epc8041, &gude_epc8045, &gude_epc8314,
                    &gude_epc8291, &gude_epc8001, &gude_epc871310, &gude_epc871210,
                    &gude_epc873300);
