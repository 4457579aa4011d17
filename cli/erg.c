/* erg: the operator's command line. Each subcommand lives in its library;
 * this file only dispatches. */
#include <stdio.h>
#include <string.h>

#include "erg_agent.h"
#include "erg_build_info.h"
#include "erg_collector.h"
#include "erg_fit.h"
#include "erg_pdu.h"
#include "erg_web.h"

static void usage(FILE *f) {
  fprintf(f, "usage: erg COMMAND [ARGS]\n"
             "commands:\n"
             "  check-config [--agent] FILE   validate an ergd (default) or erg-agent config\n"
             "  fit [--journal FILE]... [--node N] [--out MODEL] [--json]\n"
             "                                fit and validate a node's power model\n"
             "  fit --idle --node N --last 10m  record the node's idle power profile\n"
             "  pdu probe --driver snmp|modbus --host H[:PORT]|--device TTY [...]\n"
             "                                show a PDU's or meter's outlets and readings\n"
             "  report --data-dir DIR... [--from T] [--to T] [--by node|command|job|user|unit|\n"
             "         container] [--per-node] [--format csv|json|html] [...]\n"
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

static int cmd_check_config(int argc, char **argv) {
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
      printf("%s: ok: %d sources, %d nodes, %d shared-meter groups, step %us\n", path,
             cfg.nsources, cfg.nnodes, cfg.ngroups, cfg.step_seconds);
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

static int cmd_keygen(int argc, char **argv) {
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: erg keygen PREFIX   (writes PREFIX.key, mode 0600, and PREFIX.pub)\n");
    return 1;
  }
  char pub[ERG_KEY_Z85_LEN + 1], why[600];
  if (erg_key_generate(argv[1], pub, why, sizeof why) != 0) {
    fprintf(stderr, "erg: keygen: %s\n", why);
    return 2;
  }
  printf("%s.key: secret key (keep it on this host)\n%s.pub: %s\n", argv[1], argv[1], pub);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 1;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "check-config"))
    return cmd_check_config(argc - 1, argv + 1);
  if (!strcmp(cmd, "fit"))
    return erg_fit_cli(argc - 1, argv + 1);
  if (!strcmp(cmd, "pdu") && argc > 2 && !strcmp(argv[2], "probe"))
    return erg_pdu_probe_cli(argc - 2, argv + 2);
  if (!strcmp(cmd, "report"))
    return erg_report_cli(argc - 1, argv + 1);
  if (!strcmp(cmd, "jobs"))
    return erg_jobs_cli(argc - 1, argv + 1);
  if (!strcmp(cmd, "graph"))
    return erg_graph_cli(argc - 1, argv + 1);
  if (!strcmp(cmd, "keygen"))
    return cmd_keygen(argc - 1, argv + 1);
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
