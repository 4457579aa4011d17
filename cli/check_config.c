// SPDX-License-Identifier: GPL-3.0-or-later
/* erg check-config [--agent] FILE: loads an ergd (default) or erg-agent
 * config as the daemon would, and says what it found or why not. */
#include <stdio.h>
#include <string.h>

#include "erg_agent.h"
#include "erg_cli.h"
#include "erg_collector.h"

int erg_check_config_cli(int argc, char **argv) {
  int agent = argc > 1 && !strcmp(argv[1], "--agent");
  const char *path = argv[agent ? 2 : 1];
  if (argc != (agent ? 3 : 2)) {
    fprintf(stderr, "usage: erg check-config [--agent] FILE\n");
    return 1;
  }
  struct erg_config_error err;
  int rc;
  if (agent) {
    struct erg_agent_config cfg;
    erg_agent_config_defaults(&cfg);
    rc = erg_agent_config_load(path, &cfg, &err);
  } else {
    struct erg_collector_config cfg;
    erg_collector_config_defaults(&cfg);
    rc = erg_collector_config_load(path, &cfg, &err);
    if (rc == 0)
      printf("%s: ok: %d sources, %d nodes, %d shared-meter groups, step %us\n", path, cfg.nsources,
             cfg.nnodes, cfg.ngroups, cfg.step_seconds);
    /* Each group's joint fit, ready to paste (docs/model.md, "Shared meters"). */
    for (int g = 0; rc == 0 && g < cfg.ngroups; g++) {
      printf("  group %s: %d nodes share one meter; fit them with: erg fit --group %s --nodes ",
             cfg.groups[g].name, cfg.groups[g].nmembers, cfg.groups[g].name);
      for (int m = 0; m < cfg.groups[g].nmembers; m++)
        printf("%s%s", m ? "," : "", cfg.nodes[cfg.groups[g].members[m]].name);
      printf("\n");
    }
    erg_collector_config_free(&cfg);
  }
  if (rc != 0) {
    fprintf(stderr, "erg: %s\n", err.msg);
    return 2;
  }
  if (agent)
    printf("%s: ok\n", path);
  return 0;
}
