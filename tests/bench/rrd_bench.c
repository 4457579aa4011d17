// SPDX-License-Identifier: GPL-3.0-or-later
/* RRD store benchmark (not a test; tests/bench/rrd_bench.sh runs it): the
 * store calls ergd's writer thread makes, timed in one thread. First
 * NODES node.rrd files are created (the first update of each, as on a
 * first start), then ROUNDS rounds update every node once per step (one
 * cell each, 6 data sources: what ergd writes per node and cell). Prints
 * creations/s, updates/s and this process's CPU per update. With
 * RRDCACHED_ADDRESS (or DAEMON) the updates go to rrdcached: the rate is
 * then what the daemon accepts, and the final flush (every file written)
 * is timed on its own.
 * usage: rrd_bench DIR [NODES=500] [ROUNDS=20] [STEP=5] [DAYS=2] [DAEMON] */
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "erg_common.h"
#include "erg_store.h"

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void) { return erg_time_monotonic_ns() / 1e9; }

/* One cell of every node ending at t_end; returns the failures. */
static int bench_round(struct erg_store *s, int nodes, int64_t t_end) {
  int failed = 0;
  char why[300], name[32];
  for (int i = 0; i < nodes; i++) {
    struct erg_store_node_cell c = {.t_end = t_end,
                                    .measured_watts = 200 + i % 50,
                                    .modelled_watts = 198,
                                    .idle_watts = 90,
                                    .dynamic_watts = 110 + i % 50,
                                    .unattributed_watts = 0};
    snprintf(name, sizeof name, "rrdb%05d", i);
    if (erg_store_node_update(s, name, &c, why, sizeof why) != 0 && failed++ == 0)
      fprintf(stderr, "rrd_bench: %s\n", why);
  }
  return failed;
}

static void report(const char *what, int n, double wall, double cpu) {
  printf("%s: %d in %.3f s = %.0f/s, cpu %.3f s = %.1f us each\n", what, n, wall,
         wall > 0 ? n / wall : INFINITY, cpu, n ? cpu / n * 1e6 : 0);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: rrd_bench DIR [NODES=500] [ROUNDS=20] [STEP=5] [DAYS=2] [DAEMON]\n");
    return 1;
  }
  int nodes = argc > 2 ? atoi(argv[2]) : 500, rounds = argc > 3 ? atoi(argv[3]) : 20;
  unsigned step = argc > 4 ? (unsigned)atoi(argv[4]) : 5;
  double days[ERG_STORE_RESOLUTIONS] = ERG_STORE_KEEP_DAYS_DEFAULT;
  if (argc > 5)
    days[0] = atof(argv[5]);
  if (nodes < 1 || rounds < 1 || step < 1 || !(days[0] > 0)) {
    fprintf(stderr, "rrd_bench: NODES, ROUNDS, STEP and DAYS must be positive\n");
    return 1;
  }
  struct erg_store_options so = {.root = argv[1],
                                 .step_seconds = step,
                                 .rrdcached = argc > 6 ? argv[6] : NULL,
                                 .keep_days = days};
  struct erg_store *s;
  char why[300];
  if (erg_store_open(&s, &so, why, sizeof why) != 0) {
    fprintf(stderr, "rrd_bench: %s\n", why);
    return 1;
  }
  const char *daemon = erg_store_daemon(s);
  printf("rrd_bench: %d nodes, %d rounds, step %u s, %s\n", nodes, rounds, step,
         daemon ? daemon : "direct file writes");
  int64_t t = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S) / step * step - 86400;
  double w0 = wall_seconds(), c0 = cpu_seconds();
  int failed = bench_round(s, nodes, t);
  report("create (first update)", nodes, wall_seconds() - w0, cpu_seconds() - c0);
  w0 = wall_seconds();
  c0 = cpu_seconds();
  for (int r = 1; r <= rounds; r++)
    failed += bench_round(s, nodes, t + (int64_t)r * step);
  report("update", nodes * rounds, wall_seconds() - w0, cpu_seconds() - c0);
  if (daemon) {
    /* What the daemon accepted is not on disk yet: time writing it all. */
    w0 = wall_seconds();
    int bad = 0;
    for (int i = 0; i < nodes; i++) {
      char name[32], path[1200];
      snprintf(name, sizeof name, "rrdb%05d", i);
      bad += erg_store_node_path(s, name, path, sizeof path) != 0 || rrdc_flush(path) != 0;
    }
    printf("flush (rrdcached writes the queued updates, FLUSH per file): %.3f s, %d failed\n",
           wall_seconds() - w0, bad);
  }
  printf("failed updates: %d\n", failed);
  erg_store_close(s);
  return failed ? 1 : 0;
}
