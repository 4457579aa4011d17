// SPDX-License-Identifier: GPL-3.0-or-later
/* DCMI Get Power Reading (DCMI 1.5, 6.6.1): the BMC's answer decoded
 * into the one number erg takes, the current power, or the reason there is
 * none. Pure (bytes in, reading out): no libfreeipmi here, so the unit
 * tests and the fuzzer need none. The minimum, maximum and average cover a
 * window the BMC chooses (from 0 s to weeks): decoded for the probe to
 * show, never taken. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg_pdu.h"

const uint8_t erg_dcmi_power_request[5] = {ERG_DCMI_CMD_POWER_READING, ERG_DCMI_GROUP, 0x01, 0x00,
                                           0x00};

/* Response bytes: command, completion code, group extension, then 18
 * bytes of data. */
#define DCMI_RS_LEN 20

const char *erg_ipmi_completion_text(int cc) {
  static const struct {
    int cc;
    const char *text;
  } t[] = {{0x00, "success"},
           {0xC0, "node busy"},
           {0xC1, "invalid command"},
           {0xC2, "command invalid for this LUN"},
           {0xC3, "timeout while processing the command"},
           {0xC4, "out of space"},
           {0xC5, "reservation cancelled"},
           {0xC6, "request data truncated"},
           {0xC7, "request data length invalid"},
           {0xC8, "request data field length limit exceeded"},
           {0xC9, "parameter out of range"},
           {0xCA, "cannot return the number of bytes requested"},
           {0xCB, "requested sensor, data or record not present"},
           {0xCC, "invalid data field in the request"},
           {0xCD, "command illegal for this sensor or record type"},
           {0xCE, "command response could not be provided"},
           {0xCF, "duplicated request"},
           {0xD0, "SDR repository in update mode"},
           {0xD1, "device in firmware update mode"},
           {0xD2, "BMC initialisation in progress"},
           {0xD3, "destination unavailable"},
           {0xD4, "insufficient privilege level"},
           {0xD5, "not supported in the present state"},
           {0xD6, "sub-function disabled or unavailable"},
           {0xFF, "unspecified error"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i].cc == cc)
      return t[i].text;
  return cc >= 0x01 && cc <= 0x7E ? "device-specific (OEM) error" : "unknown";
}

/* Completion codes that say the BMC has no such reading at all (rather
 * than not now). */
static bool dcmi_cc_unsupported(int cc) {
  return cc == 0xC1 || cc == 0xC2 || cc == 0xCB || cc == 0xCC || cc == 0xD6;
}

static unsigned le16(const uint8_t *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }
static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int erg_dcmi_power_decode(const uint8_t *rs, size_t len, struct erg_dcmi_power *out, char *why,
                          size_t whylen) {
  memset(out, 0, sizeof *out);
  out->completion_code = -1;
  out->watts = out->current_watts = out->min_watts = out->max_watts = out->avg_watts = NAN;
  why[0] = '\0';
  out->verdict = ERG_DCMI_MALFORMED;
  if (!rs || len < 2) {
    snprintf(why, whylen, "DCMI Get Power Reading: an answer of %zu bytes (no completion code)",
             len);
    return -1;
  }
  if (rs[0] != ERG_DCMI_CMD_POWER_READING) {
    snprintf(why, whylen, "DCMI Get Power Reading: the answer is to command 0x%02X, not 0x%02X",
             rs[0], ERG_DCMI_CMD_POWER_READING);
    return -1;
  }
  int cc = out->completion_code = rs[1];
  if (cc != 0) {
    out->verdict = dcmi_cc_unsupported(cc) ? ERG_DCMI_UNSUPPORTED : ERG_DCMI_COMPLETION;
    snprintf(why, whylen, "DCMI Get Power Reading: completion code 0x%02X (%s)%s", cc,
             erg_ipmi_completion_text(cc),
             cc == 0xD4 ? ": the user needs privilege user or higher (privilege = ...)"
             : out->verdict == ERG_DCMI_UNSUPPORTED
                 ? ": this BMC has no DCMI power reading (no power meter, or DCMI off)"
                 : "");
    return -1;
  }
  if (len < 3) {
    snprintf(why, whylen, "DCMI Get Power Reading: no group extension in the answer");
    return -1;
  }
  if (rs[2] != ERG_DCMI_GROUP) {
    snprintf(why, whylen,
             "DCMI Get Power Reading: group extension 0x%02X, not 0xDC: not a DCMI answer", rs[2]);
    return -1;
  }
  if (len < DCMI_RS_LEN) {
    snprintf(why, whylen, "DCMI Get Power Reading: an answer of %zu bytes, %d expected (truncated)",
             len, DCMI_RS_LEN);
    return -1;
  }
  const uint8_t *d = rs + 3;
  out->current_watts = le16(d);
  out->min_watts = le16(d + 2);
  out->max_watts = le16(d + 4);
  out->avg_watts = le16(d + 6);
  out->bmc_time_s = le32(d + 8);
  out->period_ms = le32(d + 12);
  out->active = (d[16] & 0x40) != 0;
  if (out->current_watts == 0) {
    out->verdict = ERG_DCMI_ZERO;
    snprintf(why, whylen,
             "DCMI Get Power Reading: current power 0 W (power measurement %s): no reading, a "
             "running server never draws 0 W",
             out->active ? "active" : "inactive");
    return -1;
  }
  if (out->current_watts > ERG_DCMI_MAX_WATTS) {
    out->verdict = ERG_DCMI_ABSURD;
    snprintf(why, whylen,
             "DCMI Get Power Reading: current power %.0f W is above %.0f W, no server's: no "
             "reading",
             out->current_watts, ERG_DCMI_MAX_WATTS);
    return -1;
  }
  out->watts = out->current_watts;
  if (out->active) {
    out->verdict = ERG_DCMI_OK;
    return 0;
  }
  out->verdict = ERG_DCMI_INACTIVE_TAKEN;
  snprintf(why, whylen,
           "DCMI Get Power Reading: the BMC marks its power measurement inactive but reads "
           "%.0f W; taken (OpenBMC answers so while measuring)",
           out->current_watts);
  return 0;
}
