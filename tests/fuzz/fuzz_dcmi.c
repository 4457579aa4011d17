// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: DCMI Get Power Reading answers as a BMC (or whatever
 * answers on port 623) sends them (collector/pdu/dcmi.c). The input is the
 * response bytes ipmi_cmd_raw returns. Whatever they are: a reading is a
 * finite number in 1..20,000 W, and a refusal says why. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "erg_pdu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A copy of exactly size bytes: ASan sees any read past the end. */
  uint8_t *rs = malloc(size ? size : 1);
  if (!rs)
    return 0;
  memcpy(rs, data, size);
  struct erg_dcmi_power p;
  char why[256];
  int rc = erg_dcmi_power_decode(rs, size, &p, why, sizeof why);
  if (rc == 0) {
    if (!(isfinite(p.watts) && p.watts >= 1 && p.watts <= ERG_DCMI_MAX_WATTS))
      abort();
    if (p.verdict != ERG_DCMI_OK && p.verdict != ERG_DCMI_INACTIVE_TAKEN)
      abort();
  } else if (rc != -1 || !why[0] || !isnan(p.watts)) {
    abort();
  }
  (void)erg_ipmi_completion_text(size ? data[0] : -1);
  free(rs);
  return 0;
}
