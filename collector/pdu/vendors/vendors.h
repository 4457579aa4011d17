// SPDX-License-Identifier: GPL-3.0-or-later
/* Shared by the vendor data files: units as scales and short names for the
 * level and quantity indexes, so an entry reads like the MIB. */
#ifndef ERG_PDU_VENDORS_H
#define ERG_PDU_VENDORS_H

#include "profiles.h"

#define WH 3600.0          /* J per Wh */
#define KWH 3.6e6          /* J per kWh */
#define KWH_TENTH 360e3    /* J per 0.1 kWh */
#define KWH_HUNDREDTH 36e3 /* J per 0.01 kWh */

#define DEVICE lv[ERG_PDU_DEVICE]
#define INLET lv[ERG_PDU_INLET]
#define PHASE lv[ERG_PDU_PHASE]
#define BANK lv[ERG_PDU_BANK]
#define OUTLET lv[ERG_PDU_OUTLET]
#define SENSOR lv[ERG_PDU_SENSOR]
#define NAME q[ERG_Q_NAME]
#define POWER q[ERG_Q_POWER]
#define VA q[ERG_Q_VA]
#define PF q[ERG_Q_PF]
#define CURRENT q[ERG_Q_CURRENT]
#define VOLTAGE q[ERG_Q_VOLTAGE]
#define ENERGY q[ERG_Q_ENERGY]

/* Each vendor file ends with ERG_VENDOR_PROFILES(file_basename, &a, &b, ...):
 * the build lists every file of this folder in the registry (CMake writes
 * vendors_list.c), so adding a vendor is adding a file. */
#define ERG_VENDOR_PROFILES(file, ...)                                                             \
  const struct erg_snmp_profile *const erg_vendor_##file[] = {__VA_ARGS__, NULL}

#endif
