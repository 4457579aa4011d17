// SPDX-License-Identifier: GPL-3.0-or-later
/* The standard fallback: ENTITY-SENSOR-MIB (RFC 3433), any device that
 * exposes watt sensors. entPhySensorEntry 1.3.6.1.2.1.99.1.1.1: .1 Type
 * (watts = 6), .2 Scale (SI prefix: 8 milli, 9 units, 10 kilo), .3 Precision
 * (decimal digits), .4 Value; entPhysicalName 1.3.6.1.2.1.47.1.1.1.1.7. */
#include "vendors.h"

#define ES "1.3.6.1.2.1.99.1.1.1"
static const struct erg_snmp_profile entity_sensor = {
    .name = "entity-sensor",
    .vendor = "standard",
    .mib = "ENTITY-SENSOR-MIB (RFC 3433)",
    .SENSOR = {.NAME = {"1.3.6.1.2.1.47.1.1.1.1.7.%d"},
               .POWER = {ES ".4.%d", 1.0, ES ".3.%d", ES ".2.%d"},
               .filter = ES ".1.%d",
               .filter_value = 6},
};

ERG_VENDOR_PROFILES(entity, &entity_sensor);
