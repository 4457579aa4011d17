// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-pdusim: SIMULATED energy meter for demos and tests (not a real meter). */
#include <getopt.h>
#include <pthread.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg_common.h"
#include "sim.h"
#include "sim_redfish.h"
#include "sim_snmp.h"
#include "sim_walk.h"

static struct sim sim;
static char snmp_host[128];
static int snmp_port;
static double run_seconds; /* --duration; 0: until a signal */
static char rtu_device[128];
static int rtu_baud = 9600;
static char rtu_parity = 'N';
static bool tcp_given;
static volatile int rtu_failed, snmp_failed; /* a server that could not start stops all */
static const char *curve_spec;
static const char *specpower_csv; /* --specpower-csv; needed by specpower:ROW */
static const char *snmp_walk;     /* --snmp-walk: serve this recording instead of rPDU2 */
static const char *walk_channels[SIM_MAX_NODES * 4];
static int nwalk_channels;
static struct sim_walk *walk;
static const char *sum_specs[SIM_MAX_NODES];        /* --sum, resolved after the nodes */
static const char *node_model_specs[SIM_MAX_NODES]; /* --node-model */
static int nsum_specs, nnode_model_specs;
static const char *gpu_specs[SIM_MAX_NODES]; /* --gpu-script NODE=FILE */
static int ngpu_specs;
static struct sim_gpu_script gpu_scripts[SIM_MAX_NODES];
static struct erg_pdusim_model node_models[SIM_MAX_NODES];
static struct sim_redfish_opts rf_opts = {.host = "127.0.0.1", .port = 8000};
static struct sim_redfish *rf;

/* Options that set a number; key: its name in --node-model, for the parts
 * of a node's own truth curve. dst NULL: the field at off of the model. */
#define MODEL_FIELD(f) offsetof(struct erg_pdusim_model, f)
static const struct num_opt {
  int opt;
  const char *key;
  size_t off;
  double *dst;
  double min, max;
} nums[] = {{'I', "idle", MODEL_FIELD(idle_watts), NULL, 0, 1e5},
            {'S', "slope", MODEL_FIELD(slope_watts), NULL, 0, 1e5},
            {'E', "exponent", MODEL_FIELD(exponent), NULL, 0.1, 10},
            {'D', "disk", MODEL_FIELD(disk_watts_per_mbps), NULL, 0, 1e4},
            {'N', NULL, MODEL_FIELD(noise_watts), NULL, 0, 1e4},
            {'Q', NULL, MODEL_FIELD(quantum_watts), NULL, 0, 1e4},
            {'U', NULL, MODEL_FIELD(update_seconds), NULL, 0.05, 3600},
            {'L', NULL, MODEL_FIELD(lag_seconds), NULL, 0, 600},
            {'d', NULL, 0, &run_seconds, 0, 1e9},
            {'O', NULL, 0, &sim.energy_offset_kwh, 0, 1e7},
            {'G', NULL, 0, &sim.gpu_ac_factor, 0, 10},
            {'T', NULL, 0, &sim.start_s, 0, 1e11}};

static int num_set(const struct num_opt *o, struct erg_pdusim_model *m, const char *value,
                   char *why, size_t whylen) {
  double *dst = o->dst ? o->dst : (double *)((char *)m + o->off);
  return erg_config_double(value, o->min, o->max, dst, why, whylen);
}

static void *sim_rtu_thread(void *arg) {
  (void)arg;
  if (sim_modbus_serve_rtu(&sim, rtu_device, rtu_baud, rtu_parity, run_seconds))
    rtu_failed = sim.stop = 1;
  return NULL;
}

static void *sim_snmp_thread(void *arg) {
  (void)arg;
  if (walk ? sim_walk_serve(&sim, walk, snmp_host, snmp_port, run_seconds)
           : sim_snmp_serve(&sim, snmp_host, snmp_port, run_seconds))
    snmp_failed = sim.stop = 1; /* e.g. the port still held: say so by exiting */
  return NULL;
}

static void on_signal(int sig) {
  (void)sig;
  sim.stop = 1;
}

static void *sim_update_thread(void *arg) {
  struct sim *s = arg;
  uint64_t step = (uint64_t)(s->model.update_seconds * 1e9);
  uint64_t next = erg_time_monotonic_ns(), last = next;
  while (!s->stop) {
    uint64_t now = erg_time_monotonic_ns();
    sim_update_once(s, erg_time_realtime_ns() / 1e9, (now - last) / 1e9);
    last = now;
    next += step;
    while (!s->stop && erg_time_monotonic_ns() < next)
      erg_time_sleep_ns(20000000ULL);
  }
  return NULL;
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: erg-pdusim [--modbus HOST:PORT] [--modbus-rtu TTY [--baud N] [--parity N|E|O]]\n"
      "                  [--snmp HOST:PORT [--snmp-max-varbinds N]] [--node NAME[=CGROUP]]...\n"
      "                  [--node-model NAME:KEY=VALUE[,KEY=VALUE]...]... [--sum NAME=N1+N2...]...\n"
      "                  [--snmp-walk FILE.snmprec [--walk-channel LEVEL:N=NODE]...]\n"
      "                  [--idle W] [--slope W] [--exponent E] | [--curve FILE|specpower:ROW\n"
      "                  [--specpower-csv PATH]] [--noise W] [--quantum W]\n"
      "                  [--disk-watts-per-mbps W] [--update S] [--lag S] [--seed N]\n"
      "                  [--truth FILE] [--duration S] [--energy-offset-kwh KWH]\n"
      "                  [--gpu-script NODE=FILE]... [--gpu-ac-factor F] [--gpu-start T]\n"
      "Serves SIMULATED meters over Modbus TCP and/or RTU (unit id N = Nth --node) and\n"
      "SNMP (rPDU2-shaped, outlet N = Nth --node) whose power follows this machine's\n"
      "CPU load (or the node's cgroup) through P = idle + slope * util^exponent, or\n"
      "the --curve table, plus W per MB/s of the cgroup's block I/O with\n"
      "--disk-watts-per-mbps, plus noise, quantised, refreshed every --update seconds\n"
      "and delayed by --lag seconds. Profile for ergd: erg-sim (or sdm630).\n"
      "Modbus TCP is served with --modbus, or on 127.0.0.1:5020 when neither --snmp nor\n"
      "--modbus-rtu is given.\n"
      "--node-model NAME:KEY=VALUE,... gives node NAME its own truth curve; KEYs idle,\n"
      "slope, exponent, disk (W per MB/s) and curve (FILE or specpower:ROW, no comma);\n"
      "what it does not set comes from the global model (--curve is dropped for the\n"
      "node when it sets idle, slope or exponent). E.g. --node-model n2:idle=80,slope=150.\n"
      "--sum NAME=N1+N2+... adds a shared meter (a bank or inlet): the sum of those\n"
      "nodes' powers, noise included, quantised once; Modbus unit id = number of --node\n"
      "+ K for the Kth --sum; SNMP phase K (rPDU2PhaseStatus: power, VA, PF 1, current\n"
      "at 230 V); --truth rows with util empty. The SNMP device = the sum of the outlets.\n"
      "--energy-offset-kwh starts the float32 kWh registers at that reading (a meter\n"
      "long in service: at 48213 kWh they step by 3.9 Wh); other counters start at 0.\n"
      "--snmp-walk serves a recorded walk of a real PDU over --snmp instead (every OID\n"
      "as recorded); --walk-channel LEVEL:N=NODE (LEVEL device, inlet, phase, bank,\n"
      "outlet; e.g. inlet:1=n1; LEVEL:UNIT.N=NODE for one unit of a chain or cord,\n"
      "outlet:210.5=n1; NODE a --node or a --sum) makes the columns erg reads\n"
      "for that entity (power, VA, current, energy, found through erg's profile for\n"
      "the walk) follow NODE.\n"
      "--gpu-script NODE=FILE adds the GPU board power of an NVML stand-in script\n"
      "(tests/gpu, its 'at T gpu=N power_w=W' lines, T from --gpu-start, unix seconds,\n"
      "default this start; the stand-in's ERG_NVML_STANDIN_EPOCH) times\n"
      "--gpu-ac-factor (default 1.1) to NODE's meter.\n"
      "--redfish DIR [--redfish-http HOST:PORT] serves a Redfish recording (DIR/redfish/v1/\n"
      "  .../index.json) over plain HTTP (default 127.0.0.1:8000) as a SIMULATED BMC;\n"
      "  --redfish-channel CHASSIS=NODE (CHASSIS an @odata.id) makes the reading erg\n"
      "  takes there follow NODE (power, energy; an enclosure's inputs share it);\n"
      "  CHASSIS=NODE,KEY=VALUE... shapes its power as a BMC does (docs/accuracy.md):\n"
      "  refresh=S (sampled every S s, default 1), quantum=W (rounded to W),\n"
      "  average=S (the mean of the last S s of samples), mean=1 (a sample is the\n"
      "  mean power since the previous one, not the power of its moment), delay=MIN:MAX (each\n"
      "  answer that late, uniform, with the value of when the request came in);\n"
      "  --redfish-log FILE logs each shaped answer (request time, W, delay, answer time);\n"
      "  --redfish-delay S answers S seconds late; --redfish-user USER:PASS wants those\n"
      "  credentials (a session or basic auth; the service root is open);\n"
      "  --redfish-401-every N expires the sessions at every Nth GET with a token;\n"
      "  --redfish-503-every N answers every Nth request 503 (Retry-After: 1);\n"
      "  GET /erg-sim/stats counts requests, logins, logouts, 401s and 503s.\n");
}

static int sim_add_node(const char *spec) {
  if (sim.nnodes >= SIM_MAX_NODES)
    return -1;
  struct sim_node *n = &sim.nodes[sim.nnodes++];
  const char *eq = strchr(spec, '=');
  size_t nl = eq ? (size_t)(eq - spec) : strlen(spec);
  if (nl == 0 || nl >= sizeof n->name)
    return -1;
  memcpy(n->name, spec, nl);
  n->name[nl] = '\0';
  if (eq)
    erg_strlcpy(n->load.cgroup, eq + 1, sizeof n->load.cgroup);
  return 0;
}

/* --node-model NAME:KEY=VALUE,...: node NAME's own truth curve, the rest
 * from the global model (whose --curve is loaded by now). */
static int sim_parse_node_model(const char *spec, char *why, size_t whylen) {
  const char *colon = strchr(spec, ':');
  char name[64], buf[600], *save = NULL;
  size_t nl = colon ? (size_t)(colon - spec) : 0;
  if (!nl || nl >= sizeof name || !colon[1] || strlen(colon + 1) >= sizeof buf) {
    snprintf(why, whylen, "--node-model '%s': want NAME:KEY=VALUE[,KEY=VALUE]...", spec);
    return -1;
  }
  memcpy(name, spec, nl);
  name[nl] = '\0';
  int k = sim_find(&sim, name);
  if (k < 0 || k >= sim.nnodes || sim.nodes[k].model) {
    snprintf(why, whylen, "--node-model '%s': %s", spec,
             k < 0 || k >= sim.nnodes ? "no such --node" : "the node has one already");
    return -1;
  }
  struct erg_pdusim_model *m = &node_models[k];
  *m = sim.model;
  const char *curve = NULL;
  bool formula = false;
  erg_strlcpy(buf, colon + 1, sizeof buf);
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '='), r[128];
    const struct num_opt *o = NULL;
    if (eq)
      *eq++ = '\0';
    for (size_t i = 0; eq && i < sizeof nums / sizeof nums[0]; i++)
      if (nums[i].key && !strcmp(nums[i].key, t))
        o = &nums[i];
    if (eq && !strcmp(t, "curve")) {
      curve = eq;
    } else if (!o) {
      snprintf(why, whylen,
               "--node-model '%s': '%s' is no KEY=VALUE of idle, slope, exponent, "
               "disk, curve",
               spec, t);
      return -1;
    } else if (num_set(o, m, eq, r, sizeof r)) {
      snprintf(why, whylen, "--node-model '%s': %s: %s", spec, t, r);
      return -1;
    } else {
      formula |= o->opt != 'D';
    }
  }
  if (curve && formula) {
    snprintf(why, whylen, "--node-model '%s': curve= or idle/slope/exponent, not both", spec);
    return -1;
  }
  if (formula)
    m->ncurve = 0;
  if (curve && erg_pdusim_curve_load(m, curve, specpower_csv, why, whylen))
    return -1;
  sim.nodes[k].model = m;
  return 0;
}

/* --sum and --node-model, once every --node is known. 1 on any error. */
static int sim_nodes_setup(void) {
  char why[400];
  for (int i = 0; i < nsum_specs; i++)
    if (sim_add_sum(&sim, sum_specs[i], why, sizeof why)) {
      fprintf(stderr, "erg-pdusim: %s\n", why);
      return 1;
    }
  for (int i = 0; i < nnode_model_specs; i++)
    if (sim_parse_node_model(node_model_specs[i], why, sizeof why)) {
      fprintf(stderr, "erg-pdusim: %s\n", why);
      return 1;
    }
  for (int i = 0; i < ngpu_specs; i++) {
    const char *eq = strchr(gpu_specs[i], '=');
    char name[64];
    int k = -1;
    if (eq && (size_t)(eq - gpu_specs[i]) < sizeof name) {
      memcpy(name, gpu_specs[i], (size_t)(eq - gpu_specs[i]));
      name[eq - gpu_specs[i]] = '\0';
      k = sim_find(&sim, name);
    }
    if (k < 0 || k >= sim.nnodes) {
      fprintf(stderr, "erg-pdusim: --gpu-script '%s': want NODE=FILE of a --node\n", gpu_specs[i]);
      return 1;
    }
    if (sim_gpu_script_load(&gpu_scripts[i], eq + 1, why, sizeof why)) {
      fprintf(stderr, "erg-pdusim: --gpu-script: %s\n", why);
      return 1;
    }
    sim.nodes[k].gpu = &gpu_scripts[i];
  }
  return 0;
}

/* --snmp-walk: loads the recording, finds erg's profile for it and binds
 * each --walk-channel; prints what is live. 1 on any error. */
static int sim_walk_setup(void) {
  char why[400], how[400];
  if (!snmp_walk) {
    if (nwalk_channels) {
      fprintf(stderr, "erg-pdusim: --walk-channel needs --snmp-walk FILE\n");
      return 1;
    }
    return 0;
  }
  if (!snmp_port) {
    fprintf(stderr, "erg-pdusim: --snmp-walk needs --snmp HOST:PORT\n");
    return 1;
  }
  if (!(walk = sim_walk_load(snmp_walk, why, sizeof why))) {
    fprintf(stderr, "erg-pdusim: --snmp-walk: %s\n", why);
    return 1;
  }
  const struct erg_snmp_profile *prof = sim_walk_detect(walk, how, sizeof how);
  printf("erg-pdusim: walk %s: %zu OIDs; erg profile %s: %s\n", snmp_walk, sim_walk_rows(walk),
         prof ? prof->name : "none", how);
  for (int i = 0; i < nwalk_channels; i++) {
    char desc[2048];
    if (sim_walk_bind(walk, &sim, walk_channels[i], desc, sizeof desc, why, sizeof why)) {
      fprintf(stderr, "erg-pdusim: %s\n", why);
      return 1;
    }
    for (char *line = strtok(desc, "\n"); line; line = strtok(NULL, "\n"))
      printf("erg-pdusim: live %s\n", line);
  }
  if (!nwalk_channels)
    printf("erg-pdusim: no --walk-channel: every OID as recorded\n");
  fflush(stdout);
  return 0;
}

/* The --redfish-* options into rf_opts; 1 on a bad value. */
static int sim_redfish_option(int c, const char *arg) {
  char why[128];
  long l;
  double d;
  switch (c) {
    case 'R':
      rf_opts.dir = arg;
      return 0;
    case 'Y': {
      const char *colon = strrchr(arg, ':');
      if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof rf_opts.host ||
          erg_config_long(colon + 1, 1, 65535, &l, why, sizeof why)) {
        fprintf(stderr, "erg-pdusim: --redfish-http wants HOST:PORT\n");
        return 1;
      }
      snprintf(rf_opts.host, sizeof rf_opts.host, "%.*s", (int)(colon - arg), arg);
      rf_opts.port = (int)l;
      return 0;
    }
    case 'K':
      if (rf_opts.nchannels >= SIM_RF_MAX_CHANNELS) {
        fprintf(stderr, "erg-pdusim: too many --redfish-channel\n");
        return 1;
      }
      rf_opts.channels[rf_opts.nchannels++] = arg;
      return 0;
    case 'Z':
      if (erg_config_double(arg, 0, 600, &d, why, sizeof why)) {
        fprintf(stderr, "erg-pdusim: --redfish-delay: %s\n", why);
        return 1;
      }
      rf_opts.delay_seconds = d;
      return 0;
    case 'l':
      rf_opts.log_path = arg;
      return 0;
    case 'X': {
      const char *colon = strchr(arg, ':');
      if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof rf_opts.user ||
          strlen(colon + 1) >= sizeof rf_opts.pass) {
        fprintf(stderr, "erg-pdusim: --redfish-user wants USER:PASS\n");
        return 1;
      }
      snprintf(rf_opts.user, sizeof rf_opts.user, "%.*s", (int)(colon - arg), arg);
      snprintf(rf_opts.pass, sizeof rf_opts.pass, "%s", colon + 1);
      return 0;
    }
    default:
      if (erg_config_long(arg, 1, 1000000, &l, why, sizeof why)) {
        fprintf(stderr, "erg-pdusim: --redfish-%c0%c-every: %s\n", c == '1' ? '4' : '5',
                c == '1' ? '1' : '3', why);
        return 1;
      }
      *(c == '1' ? &rf_opts.every_401 : &rf_opts.every_503) = (int)l;
      return 0;
  }
}

static int sim_parse_args(int argc, char **argv, char *host, int *port, const char **truth) {
  static const struct option opts[] = {{"modbus", required_argument, 0, 'm'},
                                       {"node", required_argument, 0, 'n'},
                                       {"snmp", required_argument, 0, 'P'},
                                       {"idle", required_argument, 0, 'I'},
                                       {"slope", required_argument, 0, 'S'},
                                       {"exponent", required_argument, 0, 'E'},
                                       {"noise", required_argument, 0, 'N'},
                                       {"quantum", required_argument, 0, 'Q'},
                                       {"update", required_argument, 0, 'U'},
                                       {"lag", required_argument, 0, 'L'},
                                       {"seed", required_argument, 0, 's'},
                                       {"truth", required_argument, 0, 't'},
                                       {"duration", required_argument, 0, 'd'},
                                       {"modbus-rtu", required_argument, 0, 'r'},
                                       {"baud", required_argument, 0, 'b'},
                                       {"parity", required_argument, 0, 'p'},
                                       {"curve", required_argument, 0, 'c'},
                                       {"specpower-csv", required_argument, 0, 'C'},
                                       {"snmp-max-varbinds", required_argument, 0, 'V'},
                                       {"energy-offset-kwh", required_argument, 0, 'O'},
                                       {"disk-watts-per-mbps", required_argument, 0, 'D'},
                                       {"snmp-walk", required_argument, 0, 'W'},
                                       {"walk-channel", required_argument, 0, 'w'},
                                       {"node-model", required_argument, 0, 'M'},
                                       {"sum", required_argument, 0, 'A'},
                                       {"gpu-script", required_argument, 0, 'g'},
                                       {"gpu-ac-factor", required_argument, 0, 'G'},
                                       {"gpu-start", required_argument, 0, 'T'},
                                       {"redfish", required_argument, 0, 'R'},
                                       {"redfish-http", required_argument, 0, 'Y'},
                                       {"redfish-channel", required_argument, 0, 'K'},
                                       {"redfish-delay", required_argument, 0, 'Z'},
                                       {"redfish-user", required_argument, 0, 'X'},
                                       {"redfish-401-every", required_argument, 0, '1'},
                                       {"redfish-503-every", required_argument, 0, '5'},
                                       {"redfish-log", required_argument, 0, 'l'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int c;
  char why[128];
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    int handled = 0;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
      if (nums[i].opt != c)
        continue;
      handled = 1;
      if (num_set(&nums[i], &sim.model, optarg, why, sizeof why)) {
        fprintf(stderr, "erg-pdusim: %s: %s\n", argv[optind - 1], why);
        return 1;
      }
    }
    if (handled)
      continue;
    switch (c) {
      case 'm':
      case 'P': {
        const char *colon = strrchr(optarg, ':');
        if (!colon || colon == optarg || (size_t)(colon - optarg) >= 128 || atoi(colon + 1) <= 0) {
          fprintf(stderr, "erg-pdusim: --%s wants HOST:PORT\n", c == 'm' ? "modbus" : "snmp");
          return 1;
        }
        char *h = c == 'm' ? host : snmp_host;
        memcpy(h, optarg, (size_t)(colon - optarg));
        h[colon - optarg] = '\0';
        *(c == 'm' ? port : &snmp_port) = atoi(colon + 1);
        tcp_given |= c == 'm';
        break;
      }
      case 'r':
        erg_strlcpy(rtu_device, optarg, sizeof rtu_device);
        break;
      case 'b':
        rtu_baud = atoi(optarg);
        if (rtu_baud < 50) {
          fprintf(stderr, "erg-pdusim: bad --baud '%s'\n", optarg);
          return 1;
        }
        break;
      case 'p':
        rtu_parity = (char)(optarg[0] & ~0x20);
        if (optarg[1] || !strchr("NEO", rtu_parity)) {
          fprintf(stderr, "erg-pdusim: --parity wants N, E or O\n");
          return 1;
        }
        break;
      case 'c':
        curve_spec = optarg;
        break;
      case 'V':
        sim.snmp_max_varbinds = atoi(optarg);
        if (sim.snmp_max_varbinds < 1) {
          fprintf(stderr, "erg-pdusim: --snmp-max-varbinds wants a positive count\n");
          return 1;
        }
        break;
      case 'C':
        specpower_csv = optarg;
        break;
      case 'W':
        snmp_walk = optarg;
        break;
      case 'w':
        if (nwalk_channels >= (int)(sizeof walk_channels / sizeof walk_channels[0])) {
          fprintf(stderr, "erg-pdusim: too many --walk-channel\n");
          return 1;
        }
        walk_channels[nwalk_channels++] = optarg;
        break;
      case 'n':
        if (sim_add_node(optarg) != 0) {
          fprintf(stderr, "erg-pdusim: bad or too many --node '%s'\n", optarg);
          return 1;
        }
        break;
      case 'A':
      case 'g':
      case 'M': {
        const char **list = c == 'A' ? sum_specs : c == 'g' ? gpu_specs : node_model_specs;
        int *n = c == 'A' ? &nsum_specs : c == 'g' ? &ngpu_specs : &nnode_model_specs;
        if (*n >= SIM_MAX_NODES) {
          fprintf(stderr, "erg-pdusim: too many --%s\n",
                  c == 'A'   ? "sum"
                  : c == 'g' ? "gpu-script"
                             : "node-model");
          return 1;
        }
        list[(*n)++] = optarg;
        break;
      }
      case 'R':
      case 'Y':
      case 'K':
      case 'Z':
      case 'X':
      case 'l':
      case '1':
      case '5':
        if (sim_redfish_option(c, optarg))
          return 1;
        break;
      case 's':
        sim.seed = sim_seed_state(strtoul(optarg, NULL, 10));
        break;
      case 't':
        *truth = optarg;
        break;
      case 'h':
        usage(stdout);
        exit(0);
      default:
        usage(stderr);
        return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  char host[128] = "127.0.0.1";
  int port = 5020;
  const char *truth = NULL;
  char why[300];
  erg_log_init("erg-pdusim", ERG_LOG_INFO);
  erg_pdusim_model_defaults(&sim.model);
  sim.seed = sim_seed_state(1);
  sim.gpu_ac_factor = 1.1;
  sim.start_s = erg_time_realtime_ns() / 1e9;
  long nproc = sysconf(_SC_NPROCESSORS_ONLN);
  sim.ncpu = nproc > 0 ? (unsigned)nproc : 1;
  int rc = sim_parse_args(argc, argv, host, &port, &truth);
  if (rc)
    return rc;
  if (sim.nnodes == 0)
    sim_add_node("sim");
  if (curve_spec && erg_pdusim_curve_load(&sim.model, curve_spec, specpower_csv, why, sizeof why)) {
    fprintf(stderr, "erg-pdusim: --curve: %s\n", why);
    return 1;
  }
  if (sim_nodes_setup())
    return 1;
  if (sim_walk_setup()) {
    sim_walk_free(walk);
    return 1;
  }
  if (rf_opts.nchannels && !rf_opts.dir) {
    fprintf(stderr, "erg-pdusim: --redfish-channel needs --redfish DIR\n");
    return 1;
  }
  if (rf_opts.dir) {
    /* Thousands of clients at once (tests/bench/bmc_scale.sh): open files
     * up to the hard limit. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  }
  if (rf_opts.dir && !(rf = sim_redfish_setup(&sim, &rf_opts, why, sizeof why))) {
    fprintf(stderr, "erg-pdusim: %s\n", why);
    return 1;
  }
  if (truth && !(sim.truth = fopen(truth, "w"))) {
    fprintf(stderr, "erg-pdusim: cannot write %s\n", truth);
    return 1;
  }
  if (sim.truth)
    sim_truth_header(&sim);
  pthread_mutex_init(&sim.lock, NULL);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  /* Only what was asked; without any server option, Modbus TCP on the
   * default port as always. */
  bool serve_tcp = tcp_given || (!rtu_device[0] && !snmp_port && !rf);
  if (serve_tcp)
    printf("erg-pdusim: SIMULATED meter (not real hardware) on modbus tcp %s:%d\n", host, port);
  if (rtu_device[0])
    printf("erg-pdusim: SIMULATED meter (not real hardware) on modbus rtu %s %d 8%c1\n", rtu_device,
           rtu_baud, rtu_parity);
  for (int i = 0; i < sim.nnodes; i++) {
    const struct erg_pdusim_model *m = sim.nodes[i].model;
    printf("erg-pdusim: unit %d = node %s (load of %s)", i + 1, sim.nodes[i].name,
           sim.nodes[i].load.cgroup[0] ? sim.nodes[i].load.cgroup : "the whole machine");
    if (m && m->ncurve)
      printf(", own curve %s", m->curve_name);
    else if (m)
      printf(", own model idle=%gW slope=%gW exponent=%g", m->idle_watts, m->slope_watts,
             m->exponent);
    if (m && m->disk_watts_per_mbps != sim.model.disk_watts_per_mbps)
      printf(" disk=%gW/(MB/s)", m->disk_watts_per_mbps);
    printf("\n");
  }
  for (int i = sim.nnodes; i < sim.nnodes + sim.nsums; i++) {
    printf("erg-pdusim: unit %d", i + 1);
    if (snmp_port && !walk)
      printf(" / rPDU2 phase %d", i - sim.nnodes + 1);
    printf(" = sum %s =", sim.nodes[i].name);
    for (int j = 0; j < sim.nodes[i].nmembers; j++)
      printf("%s%s", j ? " + " : " ", sim.nodes[sim.nodes[i].member[j]].name);
    printf("\n");
  }
  if (sim.model.ncurve) {
    printf("erg-pdusim: model curve %s:", sim.model.curve_name);
    for (int i = 0; i < sim.model.ncurve; i++)
      printf(" %g=%gW", sim.model.curve_load[i], sim.model.curve_watts[i]);
    printf("\n");
  }
  printf("erg-pdusim: model idle=%gW slope=%gW exponent=%g disk=%gW/(MB/s) noise=%gW "
         "quantum=%gW update=%gs lag=%gs%s\n",
         sim.model.idle_watts, sim.model.slope_watts, sim.model.exponent,
         sim.model.disk_watts_per_mbps, sim.model.noise_watts, sim.model.quantum_watts,
         sim.model.update_seconds, sim.model.lag_seconds,
         sim.model.ncurve ? " (idle/slope/exponent replaced by the curve)" : "");
  if (sim.energy_offset_kwh > 0)
    printf("erg-pdusim: float32 kWh registers start at %g kWh\n", sim.energy_offset_kwh);
  fflush(stdout);
  sim_update_once(&sim, erg_time_realtime_ns() / 1e9, 0);
  pthread_t th, sth;
  pthread_create(&th, NULL, sim_update_thread, &sim);
  if (snmp_port) {
    if (walk)
      printf("erg-pdusim: SIMULATED SNMP agent (recorded walk %s, not real hardware) on udp "
             "%s:%d\n",
             snmp_walk, snmp_host, snmp_port);
    else
      printf("erg-pdusim: SIMULATED rPDU2-shaped SNMP agent on udp %s:%d\n", snmp_host, snmp_port);
    fflush(stdout);
    pthread_create(&sth, NULL, sim_snmp_thread, NULL);
  }
  if (rf && sim_redfish_start(rf, why, sizeof why)) {
    fprintf(stderr, "erg-pdusim: %s\n", why);
    sim.stop = 1;
    pthread_join(th, NULL);
    return 1;
  }
  if (rf) {
    printf("erg-pdusim: SIMULATED BMC (Redfish recording %s, not real hardware) on http "
           "%s:%d\n",
           rf_opts.dir, rf_opts.host, rf_opts.port);
    fflush(stdout);
  }
  pthread_t rth;
  if (rtu_device[0])
    pthread_create(&rth, NULL, sim_rtu_thread, NULL);
  if (serve_tcp) {
    rc = sim_modbus_serve(&sim, host, port, run_seconds);
  } else {
    uint64_t end = run_seconds > 0 ? erg_time_monotonic_ns() + (uint64_t)(run_seconds * 1e9) : 0;
    while (!sim.stop && (!end || erg_time_monotonic_ns() < end))
      erg_time_sleep_ns(100000000ULL);
  }
  sim.stop = 1;
  pthread_join(th, NULL);
  if (snmp_port)
    pthread_join(sth, NULL);
  if (rtu_device[0])
    pthread_join(rth, NULL);
  rc |= rtu_failed | snmp_failed;
  if (sim.truth)
    fclose(sim.truth);
  sim_walk_free(walk);
  sim_redfish_free(rf);
  return rc ? 1 : 0;
}
