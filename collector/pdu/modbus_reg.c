// SPDX-License-Identifier: GPL-3.0-or-later
/* Modbus register specs ("FC:ADDRESS:TYPE[:ORDER]"): what the generic
 * Modbus profile reads, and how the bytes on the wire become a number.
 * Meters disagree on word and byte order, so the order is spelled out as
 * the wire position of the value's bytes A (most significant) .. D. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "erg_pdu.h"

static const struct {
  const char *name;
  int type;
} reg_types[] = {{"int16", ERG_MODBUS_INT16},
                 {"uint16", ERG_MODBUS_UINT16},
                 {"int32", ERG_MODBUS_INT32},
                 {"uint32", ERG_MODBUS_UINT32},
                 {"float32", ERG_MODBUS_FLOAT32}};

static int reg_parse_type(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof reg_types / sizeof reg_types[0]; i++)
    if (strlen(reg_types[i].name) == n && !strncasecmp(s, reg_types[i].name, n))
      return reg_types[i].type;
  return 0;
}

static bool reg_order_ok(const char *o) {
  static const char *const ok[] = {"abcd", "cdab", "badc", "dcba"};
  for (size_t i = 0; i < 4; i++)
    if (!strcmp(o, ok[i]))
      return true;
  return false;
}

int erg_modbus_reg_parse(const char *spec, struct erg_modbus_reg *r, char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  strcpy(r->order, "abcd");
  char *end;
  long fc = strtol(spec, &end, 10);
  if (*end != ':' || (fc != 3 && fc != 4)) {
    snprintf(why, whylen, "'%s': want FC:ADDRESS:TYPE[:ORDER] with FC 3 (holding) or 4 (input)",
             spec);
    return -1;
  }
  const char *p = end + 1;
  long addr = strtol(p, &end, 0);
  if (end == p || *end != ':' || addr < 0 || addr > 65535) {
    snprintf(why, whylen, "'%s': address must be 0..65535 (decimal or 0x hex)", spec);
    return -1;
  }
  p = end + 1;
  const char *colon = strchr(p, ':');
  size_t tlen = colon ? (size_t)(colon - p) : strlen(p);
  r->type = reg_parse_type(p, tlen);
  if (!r->type) {
    snprintf(why, whylen, "'%s': type must be int16, uint16, int32, uint32 or float32", spec);
    return -1;
  }
  if (colon) {
    if (strlen(colon + 1) != 4) {
      snprintf(why, whylen, "'%s': order must be abcd, cdab, badc or dcba", spec);
      return -1;
    }
    for (int i = 0; i < 4; i++)
      r->order[i] = (char)(colon[1 + i] | 0x20);
    if (!reg_order_ok(r->order)) {
      snprintf(why, whylen, "'%s': order must be abcd, cdab, badc or dcba", spec);
      return -1;
    }
  }
  r->function = (int)fc;
  r->address = (int)addr;
  return 0;
}

double erg_modbus_reg_resolution(const struct erg_modbus_reg *r, double raw) {
  if (r->type != ERG_MODBUS_FLOAT32)
    return 1;
  float f = fabsf((float)raw);
  if (!isfinite(f))
    return NAN;
  return (double)nextafterf(f, INFINITY) - (double)f;
}

int erg_modbus_reg_count(const struct erg_modbus_reg *r) {
  return r->type == ERG_MODBUS_INT16 || r->type == ERG_MODBUS_UINT16 ? 1 : 2;
}

double erg_modbus_reg_decode(const struct erg_modbus_reg *r, const uint16_t *regs) {
  uint8_t wire[4] = {regs[0] >> 8, regs[0] & 0xff, 0, 0}, v[4] = {0};
  if (erg_modbus_reg_count(r) == 2) {
    wire[2] = regs[1] >> 8;
    wire[3] = regs[1] & 0xff;
  }
  if (erg_modbus_reg_count(r) == 1) {
    /* One register: only the byte swap (badc, dcba) matters. */
    bool swap = r->order[0] == 'b' || r->order[0] == 'd';
    uint16_t u = swap ? (uint16_t)(wire[1] << 8 | wire[0]) : (uint16_t)(wire[0] << 8 | wire[1]);
    return r->type == ERG_MODBUS_INT16 ? (double)(int16_t)u : (double)u;
  }
  for (int i = 0; i < 4; i++) /* wire position i holds value byte order[i] */
    v[r->order[i] - 'a'] = wire[i];
  uint32_t u = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
  if (r->type == ERG_MODBUS_INT32)
    return (double)(int32_t)u;
  if (r->type == ERG_MODBUS_UINT32)
    return (double)u;
  float f;
  memcpy(&f, &u, sizeof f);
  return (double)f;
}
