// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-agent: samples per-process resource use and streams it to ergd. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_agent.h"
#include "erg_build_info.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* Sleeps until CLOCK_MONOTONIC reaches mono_ns or a stop signal arrives:
 * one wakeup per interval (it was one per 100 ms, to poll for signals). */
static void agent_sleep_until(uint64_t mono_ns, const sigset_t *run_mask) {
  uint64_t now = erg_time_monotonic_ns();
  if (now >= mono_ns)
    return;
  uint64_t left = mono_ns - now;
  struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ULL),
                        .tv_nsec = (long)(left % 1000000000ULL)};
  ppoll(NULL, 0, &ts, run_mask);
}

static void usage(FILE *f) {
  fprintf(f, "usage: erg-agent [-c FILE] [--dump] [--collector ENDPOINT] [--node NAME]\n"
             "                 [--interval SECONDS] [--sub-interval SECONDS] [--count N]\n"
             "                 [--log-level LEVEL]\n"
             "                 [--collection auto|bpf|proc] [--scope CGROUP]\n"
             "                 [--curve-server-key KEY|FILE --curve-secret-key-file FILE]\n"
             "  -c, --config FILE     INI config ([agent] section), see erg-agent(8)\n"
             "      --dump            print each sample as one JSON line instead of sending\n"
             "      --dump-file FILE  send, and also append each sample sent as a JSON line\n"
             "      --count N         stop after N samples; exit 3 if they could not be\n"
             "                        delivered (no handshake with the collector)\n"
             "      --sub-interval S  also read the node's busy time every S s within the\n"
             "                        interval (default 0.1; 0: off; docs/agent.md)\n"
             "      --collection X    auto (eBPF, else /proc; default), bpf (or fail), proc\n"
             "      --scope CGROUP    report only this cgroup subtree, as if it were the node\n"
             "      --curve-server-key KEY|FILE    the collector's CURVE public key (its .pub)\n"
             "      --curve-secret-key-file FILE   this agent's secret key (erg keygen)\n"
             "      --version         print the version and git revision\n");
}

/* What erg_agent_open found about the eBPF path, said once at start (the
 * library leaves it to its caller). */
static void agent_log_start(const struct erg_agent *a) {
  const char *name, *why;
  int level;
  for (size_t i = 0; (why = erg_agent_gpu_note(a, i, &level)) != NULL; i++)
    erg_log(level, "%s", why);
  /* The one line an operator needs to see when nodes fall back. */
  if ((why = erg_agent_bpf_unavailable(a)) != NULL)
    erg_warn("BPF unavailable: %s; using /proc", why);
  /* On a VM the first question is why cycles are missing: say it once. */
  for (size_t i = 0; (name = erg_agent_feature_off(a, i, &why)) != NULL; i++)
    erg_info("eBPF feature %s off: %s", name, why);
  if ((why = erg_agent_heal_off(a)) != NULL)
    erg_warn("eBPF unseen-switch repair off (%s): a missed switch-in misplaces a running "
             "slice until the task leaves its CPU",
             why);
  if ((why = erg_agent_thread_records_off(a)) != NULL)
    erg_info("eBPF per-thread records off (%s): a slice whose switch the tracepoint misses is "
             "estimated",
             why);
}

/* What the sender found in its last call, logged as it happened (the
 * library leaves it to its caller): the link's ups and downs, each kind of
 * failed handshake once per run of failures, reminders at growing gaps. */
static void agent_log_sender(struct erg_sender *tx, const struct erg_agent_config *cfg) {
  struct erg_sender_news n;
  while (tx && erg_sender_news(tx, &n)) {
    switch (n.kind) {
      case ERG_SENDER_CONNECTED:
        erg_info("connected to collector %s", cfg->collector);
        break;
      case ERG_SENDER_LOST:
        erg_warn("lost collector %s (closed, or silent for %.3gs): samples queue (at most %ld)",
                 cfg->collector, n.seconds, cfg->queue_samples);
        break;
      case ERG_SENDER_NO_HANDSHAKE:
        erg_err("no handshake with collector %s: %s; samples queue (at most %ld), none is "
                "delivered",
                cfg->collector, n.cause, cfg->queue_samples);
        break;
      case ERG_SENDER_STILL_DOWN:
        erg_warn("still no handshake with collector %s after %.0f s: %s", cfg->collector, n.seconds,
                 n.cause);
        break;
      case ERG_SENDER_RESENT:
        erg_info("reconnected to collector %s: sent the last %zu samples again", cfg->collector,
                 n.count);
        break;
    }
  }
}

static int agent_scope_arg(const char *v, struct erg_agent_config *cfg) {
  char why[300];
  if (erg_agent_scope_set(cfg, v, why, sizeof why) != 0) {
    fprintf(stderr, "erg-agent: --scope: %s\n", why);
    return 1;
  }
  return 0;
}

struct agent_args {
  const char *config;
  int dump;
  long count;
  const char *dump_file;
};

static int agent_parse_args(int argc, char **argv, struct erg_agent_config *cfg,
                            struct agent_args *args) {
  static const struct option opts[] = {{"config", required_argument, 0, 'c'},
                                       {"dump", no_argument, 0, 'd'},
                                       {"collector", required_argument, 0, 'C'},
                                       {"node", required_argument, 0, 'n'},
                                       {"interval", required_argument, 0, 'i'},
                                       {"sub-interval", required_argument, 0, 'I'},
                                       {"count", required_argument, 0, 'N'},
                                       {"log-level", required_argument, 0, 'l'},
                                       {"help", no_argument, 0, 'h'},
                                       {"version", no_argument, 0, 'v'},
                                       {"collection", required_argument, 0, 'k'},
                                       {"scope", required_argument, 0, 's'},
                                       {"dump-file", required_argument, 0, 'D'},
                                       {"curve-server-key", required_argument, 0, 'K'},
                                       {"curve-secret-key-file", required_argument, 0, 'S'},
                                       {0, 0, 0, 0}};
  /* First pass: the config file, so command-line flags override it. */
  for (int i = 1; i < argc - 1; i++)
    if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config"))
      args->config = argv[i + 1];
  if (args->config) {
    struct erg_config_error err;
    if (erg_agent_config_load(args->config, cfg, &err) != 0) {
      fprintf(stderr, "erg-agent: %s\n", err.msg);
      return 2;
    }
  }
  int c;
  char why[256];
  while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
    switch (c) {
      case 'c':
        break;
      case 'd':
        args->dump = 1;
        break;
      case 'D':
        args->dump_file = optarg;
        break;
      case 'C':
        if (erg_config_endpoint(optarg, why, sizeof why)) {
          fprintf(stderr, "erg-agent: --collector: %s\n", why);
          return 1;
        }
        erg_strlcpy(cfg->collector, optarg, sizeof cfg->collector);
        break;
      case 'n':
        erg_strlcpy(cfg->node, optarg, sizeof cfg->node);
        break;
      case 'i':
        if (erg_config_double(optarg, 0.1, 3600, &cfg->interval_seconds, why, sizeof why)) {
          fprintf(stderr, "erg-agent: --interval: %s\n", why);
          return 1;
        }
        break;
      case 'I':
        if (erg_agent_sub_interval(optarg, &cfg->sub_interval_seconds, why, sizeof why)) {
          fprintf(stderr, "erg-agent: --sub-interval: %s\n", why);
          return 1;
        }
        break;
      case 'N':
        args->count = atol(optarg);
        break;
      case 'k':
        if (strcmp(optarg, "auto") && strcmp(optarg, "bpf") && strcmp(optarg, "proc")) {
          fprintf(stderr, "erg-agent: --collection: '%s' is not auto, bpf or proc\n", optarg);
          return 1;
        }
        erg_strlcpy(cfg->collection, optarg, sizeof cfg->collection);
        break;
      case 's':
        if (agent_scope_arg(optarg, cfg) != 0)
          return 1;
        break;
      case 'l':
        if ((cfg->log_level = erg_log_level_parse(optarg)) < 0) {
          fprintf(stderr, "erg-agent: --log-level: unknown level '%s'\n", optarg);
          return 1;
        }
        break;
      case 'K':
      case 'S':
        if (erg_agent_config_set(cfg, c == 'K' ? "curve_server_key" : "curve_secret_key_file",
                                 optarg, why, sizeof why)) {
          fprintf(stderr, "erg-agent: %s\n", why);
          return 1;
        }
        break;
      case 'h':
        usage(stdout);
        exit(0);
      case 'v':
        printf("erg-agent %s (git %s)\n", ERG_VERSION, ERG_GIT_REVISION);
        exit(0);
      default:
        usage(stderr);
        return 1;
    }
  }
  return 0;
}

/* One JSON line per sample to out (stdout for --dump, the --dump-file). */
static void agent_dump(struct erg_agent *a, const Erg__Sample *s, FILE *out) {
  char *j = erg_agent_sample_json(s, erg_agent_hello(a));
  if (j) {
    fprintf(out, "%s\n", j);
    fflush(out);
  }
  free(j);
}

static void agent_emit(struct erg_agent *a, struct erg_sender *tx, Erg__Sample *s, FILE *dump,
                       const struct erg_agent_config *cfg) {
  int hello_changed = erg_agent_hello_changed(a); /* GPUs lost: features changed */
  if (!tx) {
    char *j = hello_changed ? erg_agent_hello_json(erg_agent_hello(a), a) : NULL;
    if (j)
      puts(j);
    free(j);
    agent_dump(a, s, stdout);
    return;
  }
  /* The --dump-file copy is written whether or not the queue took it:
   * it is what the agent measured, the truth for tests. */
  if (dump)
    agent_dump(a, s, dump);
  Erg__Envelope env = ERG__ENVELOPE__INIT;
  env.version = ERG_WIRE_VERSION;
  /* Re-announce now and then so a restarted collector learns the features. */
  if (s->seq % 60 == 1 || hello_changed) {
    env.body_case = ERG__ENVELOPE__BODY_HELLO;
    env.hello = (Erg__Hello *)erg_agent_hello(a);
    erg_sender_send(tx, &env);
    agent_log_sender(tx, cfg);
  }
  env.body_case = ERG__ENVELOPE__BODY_SAMPLE;
  env.sample = s;
  int rc = erg_sender_send(tx, &env);
  agent_log_sender(tx, cfg);
  if (rc < 0)
    erg_warn("send failed");
}

int main(int argc, char **argv) {
  struct erg_agent_config cfg;
  struct agent_args args = {0};
  erg_agent_config_defaults(&cfg);
  int rc = agent_parse_args(argc, argv, &cfg, &args);
  if (rc)
    return rc;
  erg_log_init("erg-agent", cfg.log_level);
  /* SIGINT/SIGTERM stay blocked except inside agent_sleep_until, so a stop
   * request can never fall between the check and the sleep. Threads started
   * later (ZeroMQ's) inherit the mask and leave the signals to this one. */
  sigset_t stop_sigs, run_mask;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  sigemptyset(&stop_sigs);
  sigaddset(&stop_sigs, SIGINT);
  sigaddset(&stop_sigs, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop_sigs, &run_mask);
  char why[256];
  struct erg_agent *a;
  if (erg_agent_open(&a, &cfg, why, sizeof why) != 0) {
    erg_err("%s", why);
    return 1;
  }
  agent_log_start(a);
  struct erg_sender *tx = NULL;
  FILE *dump = NULL;
  if (args.dump_file && !args.dump && !(dump = fopen(args.dump_file, "a"))) {
    erg_err("--dump-file %s: %s", args.dump_file, strerror(errno));
    erg_agent_close(a);
    return 1;
  }
  if (args.dump) {
    char *j = erg_agent_hello_json(erg_agent_hello(a), a);
    if (j)
      puts(j);
    free(j);
  } else if (erg_sender_open(&tx, &cfg, why, sizeof why) != 0) {
    erg_err("%s", why);
    erg_agent_close(a);
    return 1;
  }
  /* The scope decides what "the node" is: said at start, whole or not. */
  uint64_t step = (uint64_t)(cfg.interval_seconds * 1e9);
  /* The busy time's sub-samples: at least 2 per interval, at most 255. */
  double sub_s = fmax(cfg.sub_interval_seconds, cfg.interval_seconds / 255);
  uint64_t sub = cfg.sub_interval_seconds > 0 && sub_s * 2 <= cfg.interval_seconds + 1e-9
                     ? (uint64_t)(sub_s * 1e9)
                     : 0;
  char subtext[64] = "";
  if (sub)
    snprintf(subtext, sizeof subtext, " (busy time every %.3gs)", sub_s);
  erg_info("node %s, interval %.3gs%s, collection %s, scope %s%s, %s %s", cfg.node,
           cfg.interval_seconds, subtext, erg_agent_hello(a)->collection,
           cfg.scope[0] ? "cgroup " : "", cfg.scope[0] ? cfg.scope : "the whole machine",
           tx ? "sending to" : "dumping", tx ? cfg.collector : "to stdout");
  uint64_t next = erg_time_monotonic_ns();
  long sent = 0;
  while (!stop_requested && (!args.count || sent < args.count)) {
    const Erg__Sample *s;
    char swhy[320]; /* "BPF drain: " and the drain's reason */
    int r = erg_agent_sweep(a, &s, swhy, sizeof swhy);
    if (r < 0)
      erg_warn("sweep failed: %s", swhy);
    /* A full process map means processes go uncounted: said once. */
    uint64_t drops = erg_agent_map_full(a);
    if (drops)
      erg_warn("BPF process map full: %llu events dropped so far, some processes go uncounted "
               "(their CPU time lands in [system])",
               (unsigned long long)drops);
    const char *gpu_stopped = erg_agent_gpu_stopped(a);
    if (gpu_stopped)
      erg_warn("GPU sampling stopped: %s", gpu_stopped);
    if (r > 0) {
      agent_emit(a, tx, (Erg__Sample *)s, dump, &cfg);
      sent++;
    }
    /* Fixed-rate schedule on CLOCK_MONOTONIC: no drift, no catch-up bursts.
     * Sub-samples at next - step + k sub, those not yet past. */
    uint64_t next_sub = next + sub;
    next += step;
    uint64_t now = erg_time_monotonic_ns();
    if (next < now)
      next = now;
    while (sub && next_sub < now)
      next_sub += sub;
    while (!stop_requested && (now = erg_time_monotonic_ns()) < next) {
      if (sub && now >= next_sub) {
        erg_agent_subsample(a);
        while (next_sub <= now)
          next_sub += sub;
        continue;
      }
      agent_sleep_until(sub && next_sub + sub / 2 < next ? next_sub : next, &run_mask);
    }
  }
  /* A --count run's samples reach the collector only over a link that is
   * up at its end (the close's linger flushes them): a run that could not
   * deliver them fails, so scripts notice. */
  int status = 0;
  if (tx && args.count && sent >= args.count) {
    int up = erg_sender_link_up(tx, 2000);
    agent_log_sender(tx, &cfg);
    if (!up) {
      erg_err("no link to collector %s at the end of the --count run: samples still queued "
              "are not delivered",
              cfg.collector);
      status = 3;
    }
  }
  /* The link's last events before the close reads them for its linger. */
  if (tx) {
    erg_sender_link_up(tx, 0);
    agent_log_sender(tx, &cfg);
  }
  erg_sender_close(tx);
  if (dump)
    fclose(dump);
  erg_agent_close(a);
  return status;
}
