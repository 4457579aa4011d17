// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: Modbus register specs and decoding
 * (collector/pdu/modbus_reg.c). The input is a spec text up to the first
 * NUL; the bytes after it are the registers a meter sent (zero-filled when
 * short). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "erg_pdu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t slen = nul ? (size_t)(nul - data) : size;
  char *spec = malloc(slen + 1);
  if (!spec)
    return 0;
  memcpy(spec, data, slen);
  spec[slen] = '\0';
  uint16_t regs[2] = {0, 0};
  if (nul) {
    const uint8_t *r = nul + 1;
    size_t n = size - slen - 1;
    for (size_t i = 0; i < 4 && i < n; i++)
      regs[i / 2] |= (uint16_t)(r[i] << (i % 2 ? 0 : 8));
  }
  struct erg_modbus_reg reg;
  char why[256] = "";
  if (erg_modbus_reg_parse(spec, &reg, why, sizeof why) != 0) {
    if (!why[0])
      abort(); /* a refusal always says why */
  } else {
    int count = erg_modbus_reg_count(&reg);
    if (count < 1 || count > 2)
      abort();
    double raw = erg_modbus_reg_decode(&reg, regs);
    (void)erg_modbus_reg_resolution(&reg, raw);
  }
  free(spec);
  return 0;
}
