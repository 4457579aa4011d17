// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd: the erg collector daemon. */
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_build_info.h"
#include "erg_collector.h"
#include "erg_web.h"

static volatile int stop_requested; /* int: erg_collector_run takes volatile int * */
static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void usage(FILE *f) {
  fprintf(f, "usage: ergd -c FILE [--log-level LEVEL]\n"
             "  -c, --config FILE   INI config, see ergd(8) and docs/config.md\n"
             "      --version       print the version and git revision\n");
}

/* A BMC meter keeps a connection (Redfish) or a socket (IPMI) open; the
 * agents and the web server want theirs: the soft limit on open files is
 * raised to what the sources need (up to the hard limit), and a shortfall
 * said (docs/scale.md). */
static void ergd_raise_nofile(const struct erg_collector_config *cfg) {
  struct rlimit rl;
  rlim_t need = 1024 + 2 * (rlim_t)cfg->nsources;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
    return;
  rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
  rl.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || want < need)
    erg_warn("open files limited to %llu (hard limit); %d sources want about %llu: raise "
             "LimitNOFILE (docs/scale.md)",
             (unsigned long long)(want < need ? want : rl.rlim_cur), cfg->nsources,
             (unsigned long long)need);
  else
    erg_info("open files limit raised to %llu for %d sources", (unsigned long long)want,
             cfg->nsources);
}

int main(int argc, char **argv) {
  /* ergd runs itself to render pages (web/render_proc.c). */
  if (argc > 1 && !strcmp(argv[1], ERG_WEB_RENDER_ARG))
    return erg_web_render_child_main(argc, argv);
  static const struct option opts[] = {{"config", required_argument, 0, 'c'},
                                       {"log-level", required_argument, 0, 'l'},
                                       {"help", no_argument, 0, 'h'},
                                       {"version", no_argument, 0, 'v'},
                                       {0, 0, 0, 0}};
  const char *path = NULL, *level = NULL;
  int c;
  while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
    switch (c) {
      case 'c':
        path = optarg;
        break;
      case 'l':
        level = optarg;
        break;
      case 'h':
        usage(stdout);
        return 0;
      case 'v':
        printf("ergd %s (git %s)\n", ERG_VERSION, ERG_GIT_REVISION);
        return 0;
      default:
        usage(stderr);
        return 1;
    }
  }
  if (!path) {
    usage(stderr);
    return 1;
  }
  struct erg_collector_config cfg;
  struct erg_config_error err;
  erg_collector_config_defaults(&cfg);
  if (erg_collector_config_load(path, &cfg, &err) != 0) {
    fprintf(stderr, "ergd: %s\n", err.msg);
    erg_collector_config_free(&cfg);
    return 2;
  }
  if (level && (cfg.log_level = erg_log_level_parse(level)) < 0) {
    fprintf(stderr, "ergd: --log-level: unknown level '%s'\n", level);
    return 1;
  }
  erg_log_init("ergd", cfg.log_level);
  ergd_raise_nofile(&cfg);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  int rc = erg_collector_run(&cfg, &stop_requested);
  erg_collector_config_free(&cfg);
  return rc;
}
