// SPDX-License-Identifier: GPL-3.0-or-later
/* erg: the operator's command line. This file only dispatches: each
 * command is a file of cli/ (its options and output) over the libraries. */
#include <stdio.h>
#include <string.h>

#include "erg_build_info.h"
#include "erg_cli.h"

static void usage(FILE *f) {
  fprintf(f, "usage: erg COMMAND [ARGS]\n"
             "commands:\n"
             "  check-config [--agent] FILE   validate an ergd (default) or erg-agent config\n"
             "  fit [--journal FILE]... [--node N] [--out MODEL] [--json]\n"
             "                                fit and validate a node's power model\n"
             "  fit --idle --node N --last 10m  record the node's idle power profile\n"
             "  pdu probe --driver snmp|modbus|redfish --host H[:PORT]|URL|--device TTY [...]\n"
             "                                show a PDU's or meter's outlets and readings\n"
             "  report --data-dir DIR... [--from T] [--to T] [--by node|command|job|user|unit|\n"
             "         container] [--per-node] [--format table|csv|json|html] [...]\n"
             "                                energy per node or key over a period\n"
             "  jobs --data-dir DIR [--from T] [--to T] [--job ID]... [--parsable2]\n"
             "       [--format table|parsable2|csv|json] [--push [--wait S]]\n"
             "                                energy per Slurm job with sacct's fields; --push\n"
             "                                writes it into the jobs' AdminComment\n"
             "  graph --data-dir DIR [--www-dir DIR] [--model-dir DIR] [--format png|svg]\n"
             "                                render the web pages once (for cron)\n"
             "  keygen PREFIX                 write a CURVE key pair to PREFIX.key and PREFIX.pub\n"
             "  version                       print the version and git revision\n"
             "See erg(1).\n");
}

/* The commands by name (and the word after it, for erg pdu probe); each
 * gets argv from its last word on. */
static const struct {
  const char *name, *sub;
  int (*run)(int argc, char **argv);
} commands[] = {
    {"check-config", NULL, erg_check_config_cli},
    {"fit", NULL, erg_fit_cli},
    {"pdu", "probe", erg_pdu_probe_cli},
    {"report", NULL, erg_report_cli},
    {"jobs", NULL, erg_jobs_cli},
    {"graph", NULL, erg_graph_cli},
    {"keygen", NULL, erg_keygen_cli},
};

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 1;
  }
  const char *cmd = argv[1];
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
    if (strcmp(cmd, commands[i].name))
      continue;
    if (!commands[i].sub)
      return commands[i].run(argc - 1, argv + 1);
    if (argc > 2 && !strcmp(argv[2], commands[i].sub))
      return commands[i].run(argc - 2, argv + 2);
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("erg %s (git %s)\n", ERG_VERSION, ERG_GIT_REVISION);
    return 0;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "erg: unknown command '%s'\n", cmd);
  usage(stderr);
  return 1;
}
