// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the agent config loader (node-agent/agent.c) on the
 * input as an agent.conf. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "erg_agent.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file_write("agent.conf", data, size);
  if (!path)
    return 0;
  struct erg_agent_config cfg;
  struct erg_config_error err = {{0}};
  erg_agent_config_defaults(&cfg);
  if (erg_agent_config_load(path, &cfg, &err) != 0 && !err.msg[0])
    abort(); /* a refusal always says why */
  return 0;
}
