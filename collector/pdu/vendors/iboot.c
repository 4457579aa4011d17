// SPDX-License-Identifier: GPL-3.0-or-later
/* Dataprobe iBoot-PDU. */
#include "vendors.h"

/* IBOOTPDU-MIB (iBoot-PDU-Agent = enterprises.1418.6). The agent reports
 * net-snmp's generic sysObjectID (1.3.6.1.4.1.8072.3.2.10), so the profile
 * is found by its tables. Only the line cords are metered, as scalars:
 *   sensors ...6.6: .1 voltageLC1, .2 currentLC1, .3 voltageLC2,
 *   .4 currentLC2 (all "divide by 100": 0.01 V, 0.01 A); no power, so
 *   power is estimated from A x V.
 * Line cord 1 is the inlet row. Line cord 2 (deviceNumberOfLineCords
 * ...6.1.7 = two(1), e.g. the PDU8-2N models) cannot be given: its two
 * scalars sit at arcs 3 and 4, not under one "%d" shared with cord 1's
 * arcs 1 and 2. The outlet table (...6.5.1, indexed from 0) has names and
 * switch states but no readings and is not used.
 * deviceModelName ...6.1.4. */
#define IBOOT "1.3.6.1.4.1.1418.6"
static const struct erg_snmp_profile iboot_pdu = {
    .name = "iboot-pdu",
    .vendor = "Dataprobe",
    .mib = "IBOOTPDU-MIB",
    .sysoids = {IBOOT},
    .oid_model = IBOOT ".1.4.0",
    .INLET = {.CURRENT = {IBOOT ".6.2.0", 0.01}, .VOLTAGE = {IBOOT ".6.1.0", 0.01}},
};

ERG_VENDOR_PROFILES(iboot, &iboot_pdu);
