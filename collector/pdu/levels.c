// SPDX-License-Identifier: GPL-3.0-or-later
/* The metering levels' names, as the config and the probe spell them: a
 * file of its own because every driver and profile file names levels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_pdu.h"

const char *erg_pdu_level_name(int level) {
  static const char *const names[ERG_PDU_NLEVELS] = {
      [ERG_PDU_OUTLET] = "outlet", [ERG_PDU_DEVICE] = "device", [ERG_PDU_INLET] = "inlet",
      [ERG_PDU_PHASE] = "phase",   [ERG_PDU_BANK] = "bank",     [ERG_PDU_SENSOR] = "sensor"};
  return level >= 0 && level < ERG_PDU_NLEVELS ? names[level] : "?";
}

const char *erg_pdu_channel_text(const struct erg_pdu_source_config *cfg, int c, char *buf,
                                 size_t len) {
  if (c < 0 || c >= cfg->nchannels)
    snprintf(buf, len, "?");
  else if (cfg->units[c][0])
    snprintf(buf, len, "%s.%d", cfg->units[c], cfg->channels[c]);
  else
    snprintf(buf, len, "%d", cfg->channels[c]);
  return buf;
}

bool erg_pdu_unit_ok(const char *unit) {
  int arcs = 0;
  for (const char *p = unit; *p;) {
    char *end;
    if (*p < '0' || *p > '9')
      return false;
    long v = strtol(p, &end, 10);
    if (v > 65535 || ++arcs > 2 || end - p > 5)
      return false;
    p = end;
    if (*p == '.' && p[1])
      p++;
    else if (*p)
      return false;
  }
  return arcs > 0 && strlen(unit) < ERG_PDU_UNIT_MAX;
}

int erg_pdu_unit_num(const char *s, size_t len, char unit[ERG_PDU_UNIT_MAX], long *num) {
  const char *end = s + len, *dot = NULL;
  for (const char *d = s; d < end; d++)
    if (*d == '.')
      dot = d;
  unit[0] = '\0';
  if (dot) {
    if ((size_t)(dot - s) >= ERG_PDU_UNIT_MAX)
      return -1;
    memcpy(unit, s, (size_t)(dot - s));
    unit[dot - s] = '\0';
    if (!erg_pdu_unit_ok(unit))
      return -1;
    s = dot + 1;
  }
  long v = 0;
  if (s == end)
    return -1;
  for (; s < end; s++)
    if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > 65535)
      return -1;
  *num = v;
  return 0;
}
