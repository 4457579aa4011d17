// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: SNMP varbind values as readings
 * (collector/pdu/snmp_session.c). The first byte is the ASN type, the rest
 * the value, held as net-snmp's decoder holds it: a long for the integer
 * types, a struct counter64 for Counter64, the bytes themselves (exactly
 * allocated, so over-reads show) for the others. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snmp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  netsnmp_variable_list v;
  memset(&v, 0, sizeof v);
  v.type = data[0];
  const uint8_t *val = data + 1;
  size_t n = size - 1;
  long integer = 0;
  struct counter64 c64 = {0, 0};
  uint8_t *bytes = NULL;
  switch (v.type) {
    case ASN_INTEGER:
    case ASN_GAUGE:
    case ASN_COUNTER:
    case ASN_TIMETICKS:
    case ASN_UINTEGER:
      memcpy(&integer, val, n < sizeof integer ? n : sizeof integer);
      v.val.integer = &integer;
      v.val_len = sizeof integer;
      break;
    case ASN_COUNTER64:
      for (size_t i = 0; i < 8 && i < n; i++) {
        if (i < 4)
          c64.high = c64.high << 8 | val[i];
        else
          c64.low = c64.low << 8 | val[i];
      }
      v.val.counter64 = &c64;
      v.val_len = sizeof c64;
      break;
    default:
      bytes = malloc(n ? n : 1);
      if (!bytes)
        return 0;
      memcpy(bytes, val, n);
      v.val.string = bytes;
      v.val_len = n;
      break;
  }
  double d;
  char why[128] = "";
  int rc = erg_snmp_vb_value(&v, &d, why, sizeof why);
  if (rc < -1 || rc > 1 || (rc == -1 && !why[0]))
    abort();
  (void)erg_snmp_vb_present(&v);
  char small[2], text[64];
  erg_snmp_vb_string(&v, small, sizeof small);
  erg_snmp_vb_string(&v, text, sizeof text);
  free(bytes);
  return 0;
}
