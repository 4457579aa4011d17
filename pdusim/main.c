/* erg-pdusim: SIMULATED energy meter for demos and tests (not a real meter). */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg_common.h"
#include "sim.h"
#include "sim_snmp.h"
#include "sim_walk.h"

static struct sim sim;
static char snmp_host[128];
static int snmp_port;
static double snmp_duration;
static char rtu_device[128];
static int rtu_baud = 9600;
static char rtu_parity = 'N';
static bool tcp_given;
static volatile int rtu_failed;
static const char *curve_spec;
static const char *specpower_csv; /* --specpower-csv; needed by specpower:ROW */
static const char *snmp_walk;     /* --snmp-walk: serve this recording instead of rPDU2 */
static const char *walk_channels[SIM_MAX_NODES * 4];
static int nwalk_channels;
static struct sim_walk *walk;

static void *sim_rtu_thread(void *arg) {
  (void)arg;
  if (sim_modbus_serve_rtu(&sim, rtu_device, rtu_baud, rtu_parity, snmp_duration))
    rtu_failed = sim.stop = 1;
  return NULL;
}

static void *sim_snmp_thread(void *arg) {
  (void)arg;
  if (walk)
    sim_walk_serve(&sim, walk, snmp_host, snmp_port, snmp_duration);
  else
    sim_snmp_serve(&sim, snmp_host, snmp_port, snmp_duration);
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
  fprintf(f,
          "usage: erg-pdusim [--modbus HOST:PORT] [--modbus-rtu TTY [--baud N] [--parity N|E|O]]\n"
          "                  [--snmp HOST:PORT [--snmp-max-varbinds N]] [--node NAME[=CGROUP]]...\n"
          "                  [--snmp-walk FILE.snmprec [--walk-channel LEVEL:N=NODE]...]\n"
          "                  [--idle W] [--slope W] [--exponent E] | [--curve FILE|specpower:ROW\n"
          "                  [--specpower-csv PATH]] [--noise W] [--quantum W]\n"
          "                  [--disk-watts-per-mbps W] [--update S] [--lag S] [--seed N]\n"
          "                  [--truth FILE] [--duration S] [--energy-offset-kwh KWH]\n"
          "Serves SIMULATED meters over Modbus TCP and/or RTU (unit id N = Nth --node) and\n"
          "SNMP (rPDU2-shaped, outlet N = Nth --node) whose power follows this machine's\n"
          "CPU load (or the node's cgroup) through P = idle + slope * util^exponent, or\n"
          "the --curve table, plus W per MB/s of the cgroup's block I/O with\n"
          "--disk-watts-per-mbps, plus noise, quantised, refreshed every --update seconds\n"
          "and delayed by --lag seconds. Profile for ergd: erg-sim (or sdm630).\n"
          "--energy-offset-kwh starts the float32 kWh registers at that reading (a meter\n"
          "long in service: at 48213 kWh they step by 3.9 Wh); other counters start at 0.\n"
          "--snmp-walk serves a recorded walk of a real PDU over --snmp instead (every OID\n"
          "as recorded); --walk-channel LEVEL:N=NODE (LEVEL device, inlet, phase, bank,\n"
          "outlet; e.g. inlet:1=n1) makes the columns erg reads for that entity (power,\n"
          "VA, current, energy, found through erg's profile for the walk) follow NODE.\n");
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

static int sim_parse_args(int argc, char **argv, char *host, int *port, double *duration,
                          const char **truth) {
  static const struct option opts[] = {
      {"modbus", required_argument, 0, 'm'}, {"node", required_argument, 0, 'n'},
      {"snmp", required_argument, 0, 'P'},
      {"idle", required_argument, 0, 'I'},   {"slope", required_argument, 0, 'S'},
      {"exponent", required_argument, 0, 'E'}, {"noise", required_argument, 0, 'N'},
      {"quantum", required_argument, 0, 'Q'}, {"update", required_argument, 0, 'U'},
      {"lag", required_argument, 0, 'L'},    {"seed", required_argument, 0, 's'},
      {"truth", required_argument, 0, 't'},  {"duration", required_argument, 0, 'd'},
      {"modbus-rtu", required_argument, 0, 'r'}, {"baud", required_argument, 0, 'b'},
      {"parity", required_argument, 0, 'p'}, {"curve", required_argument, 0, 'c'},
      {"specpower-csv", required_argument, 0, 'C'},
      {"snmp-max-varbinds", required_argument, 0, 'V'},
      {"energy-offset-kwh", required_argument, 0, 'O'},
      {"disk-watts-per-mbps", required_argument, 0, 'D'},
      {"snmp-walk", required_argument, 0, 'W'}, {"walk-channel", required_argument, 0, 'w'},
      {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  struct erg_pdusim_model *m = &sim.model;
  struct { int opt; double *dst; double min, max; } nums[] = {
      {'I', &m->idle_watts, 0, 1e5},   {'S', &m->slope_watts, 0, 1e5},
      {'E', &m->exponent, 0.1, 10},    {'N', &m->noise_watts, 0, 1e4},
      {'Q', &m->quantum_watts, 0, 1e4}, {'U', &m->update_seconds, 0.05, 3600},
      {'L', &m->lag_seconds, 0, 600},  {'d', duration, 0, 1e9},
      {'O', &sim.energy_offset_kwh, 0, 1e7},
      {'D', &m->disk_watts_per_mbps, 0, 1e4}};
  int c;
  char why[128];
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    int handled = 0;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
      if (nums[i].opt != c)
        continue;
      handled = 1;
      if (erg_config_double(optarg, nums[i].min, nums[i].max, nums[i].dst, why, sizeof why)) {
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
    case 'r': erg_strlcpy(rtu_device, optarg, sizeof rtu_device); break;
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
    case 'c': curve_spec = optarg; break;
    case 'V':
      sim.snmp_max_varbinds = atoi(optarg);
      if (sim.snmp_max_varbinds < 1) {
        fprintf(stderr, "erg-pdusim: --snmp-max-varbinds wants a positive count\n");
        return 1;
      }
      break;
    case 'C': specpower_csv = optarg; break;
    case 'W': snmp_walk = optarg; break;
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
    case 's': sim.seed = (unsigned)strtoul(optarg, NULL, 10); break;
    case 't': *truth = optarg; break;
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  char host[128] = "127.0.0.1";
  int port = 5020;
  double duration = 0;
  const char *truth = NULL;
  char why[300];
  erg_log_init("erg-pdusim", ERG_LOG_INFO);
  erg_pdusim_model_defaults(&sim.model);
  sim.seed = 1;
  long nproc = sysconf(_SC_NPROCESSORS_ONLN);
  sim.ncpu = nproc > 0 ? (unsigned)nproc : 1;
  int rc = sim_parse_args(argc, argv, host, &port, &duration, &truth);
  if (rc)
    return rc;
  if (sim.nnodes == 0)
    sim_add_node("sim");
  if (curve_spec &&
      erg_pdusim_curve_load(&sim.model, curve_spec, specpower_csv, why, sizeof why)) {
    fprintf(stderr, "erg-pdusim: --curve: %s\n", why);
    return 1;
  }
  if (sim_walk_setup()) {
    sim_walk_free(walk);
    return 1;
  }
  if (truth && !(sim.truth = fopen(truth, "w"))) {
    fprintf(stderr, "erg-pdusim: cannot write %s\n", truth);
    return 1;
  }
  if (sim.truth)
    fprintf(sim.truth, "time_unix_seconds,node,util,lagged_util,watts,energy_joules%s\n",
            sim.model.disk_watts_per_mbps > 0 ? ",lagged_disk_bytes_per_second" : "");
  pthread_mutex_init(&sim.lock, NULL);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  bool serve_tcp = tcp_given || !rtu_device[0];
  if (serve_tcp)
    printf("erg-pdusim: SIMULATED meter (not real hardware) on modbus tcp %s:%d\n", host, port);
  if (rtu_device[0])
    printf("erg-pdusim: SIMULATED meter (not real hardware) on modbus rtu %s %d 8%c1\n",
           rtu_device, rtu_baud, rtu_parity);
  for (int i = 0; i < sim.nnodes; i++)
    printf("erg-pdusim: unit %d = node %s (load of %s)\n", i + 1, sim.nodes[i].name,
           sim.nodes[i].load.cgroup[0] ? sim.nodes[i].load.cgroup : "the whole machine");
  if (sim.model.ncurve) {
    printf("erg-pdusim: model curve %s:", sim.model.curve_name);
    for (int i = 0; i < sim.model.ncurve; i++)
      printf(" %g=%gW", sim.model.curve_load[i], sim.model.curve_watts[i]);
    printf("\n");
  }
  printf("erg-pdusim: model idle=%gW slope=%gW exponent=%g disk=%gW/(MB/s) noise=%gW "
         "quantum=%gW update=%gs lag=%gs%s\n",
         sim.model.idle_watts, sim.model.slope_watts, sim.model.exponent,
         sim.model.disk_watts_per_mbps, sim.model.noise_watts,
         sim.model.quantum_watts, sim.model.update_seconds, sim.model.lag_seconds,
         sim.model.ncurve ? " (idle/slope/exponent replaced by the curve)" : "");
  if (sim.energy_offset_kwh > 0)
    printf("erg-pdusim: float32 kWh registers start at %g kWh\n", sim.energy_offset_kwh);
  fflush(stdout);
  sim_update_once(&sim, erg_time_realtime_ns() / 1e9, 0);
  pthread_t th, sth;
  pthread_create(&th, NULL, sim_update_thread, &sim);
  snmp_duration = duration;
  if (snmp_port) {
    if (walk)
      printf("erg-pdusim: SIMULATED SNMP agent (recorded walk %s, not real hardware) on udp "
             "%s:%d\n", snmp_walk, snmp_host, snmp_port);
    else
      printf("erg-pdusim: SIMULATED rPDU2-shaped SNMP agent on udp %s:%d\n", snmp_host,
             snmp_port);
    fflush(stdout);
    pthread_create(&sth, NULL, sim_snmp_thread, NULL);
  }
  pthread_t rth;
  if (rtu_device[0])
    pthread_create(&rth, NULL, sim_rtu_thread, NULL);
  if (serve_tcp) {
    rc = sim_modbus_serve(&sim, host, port, duration);
  } else {
    uint64_t end = duration > 0 ? erg_time_monotonic_ns() + (uint64_t)(duration * 1e9) : 0;
    while (!sim.stop && (!end || erg_time_monotonic_ns() < end))
      erg_time_sleep_ns(100000000ULL);
  }
  sim.stop = 1;
  pthread_join(th, NULL);
  if (snmp_port)
    pthread_join(sth, NULL);
  if (rtu_device[0])
    pthread_join(rth, NULL);
  rc |= rtu_failed;
  if (sim.truth)
    fclose(sim.truth);
  sim_walk_free(walk);
  return rc ? 1 : 0;
}
