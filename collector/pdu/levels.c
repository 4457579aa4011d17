// SPDX-License-Identifier: GPL-3.0-or-later
/* The metering levels' names, as the config and the probe spell them: a
 * file of its own because every driver and profile file names levels. */
#include "erg_pdu.h"

const char *erg_pdu_level_name(int level) {
  static const char *const names[ERG_PDU_NLEVELS] = {
      [ERG_PDU_OUTLET] = "outlet", [ERG_PDU_DEVICE] = "device", [ERG_PDU_INLET] = "inlet",
      [ERG_PDU_PHASE] = "phase",   [ERG_PDU_BANK] = "bank",     [ERG_PDU_SENSOR] = "sensor"};
  return level >= 0 && level < ERG_PDU_NLEVELS ? names[level] : "?";
}
