// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the ergd config loader (collector/config.c) on the
 * input as an ergd.conf. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "erg_collector.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file_write("ergd.conf", data, size);
  if (!path)
    return 0;
  struct erg_collector_config c;
  struct erg_config_error err = {{0}};
  erg_collector_config_defaults(&c);
  if (erg_collector_config_load(path, &c, &err) != 0 && !err.msg[0])
    abort(); /* a refusal always says why */
  erg_collector_config_free(&c);
  return 0;
}
