// SPDX-License-Identifier: GPL-3.0-or-later
/* SNMP polling benchmark: erg_pdu_snmp_poll_many over many PDUs.
 * usage: snmp_bench TARGETS_FILE ROUNDS OUTLETS [--sequential | --inflight N]
 * TARGETS_FILE: one "HOST PORT COMMUNITY" per line. Prints one line per
 * round (seconds, sources ok, outlets ok) and the median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "erg_common.h"
#include "erg_pdu.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static size_t bench_load(const char *path, int outlets, struct erg_pdu_source **srcs) {
  FILE *f = fopen(path, "r");
  char host[128], comm[64];
  int port;
  size_t n = 0, cap = 0;
  while (f && fscanf(f, "%127s %d %63s", host, &port, comm) == 3) {
    if (n == cap && !(*srcs = realloc(*srcs, (cap = cap ? 2 * cap : 64) * sizeof **srcs)))
      exit(1);
    struct erg_pdu_source_config c;
    memset(&c, 0, sizeof c);
    snprintf(c.driver, sizeof c.driver, "snmp");
    snprintf(c.host, sizeof c.host, "%s", host);
    snprintf(c.community, sizeof c.community, "%s", comm);
    snprintf(c.profile, sizeof c.profile, "apc-rpdu2");
    c.port = port;
    c.snmp_version = 2;
    c.timeout_seconds = 10;
    c.retries = 0;
    c.nchannels = outlets;
    for (int i = 0; i < outlets; i++)
      c.channels[i] = i + 1;
    char why[256];
    if (erg_pdu_source_open(&(*srcs)[n], &c, why, sizeof why)) {
      fprintf(stderr, "open %s: %s\n", comm, why);
      exit(1);
    }
    n++;
  }
  if (f)
    fclose(f);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: snmp_bench TARGETS_FILE ROUNDS OUTLETS [--sequential | --inflight N]\n");
    return 1;
  }
  int rounds = atoi(argv[2]), outlets = atoi(argv[3]);
  int seq = argc > 4 && !strcmp(argv[4], "--sequential");
  if (argc > 5 && !strcmp(argv[4], "--inflight"))
    erg_pdu_snmp_set_max_inflight(atoi(argv[5]));
  struct erg_pdu_source *srcs = NULL;
  size_t n = bench_load(argv[1], outlets, &srcs);
  struct erg_pdu_source **sp = calloc(n, sizeof *sp);
  struct erg_pdu_reading **rp = calloc(n, sizeof *rp);
  int *rc = calloc(n, sizeof *rc);
  for (size_t i = 0; i < n; i++) {
    sp[i] = &srcs[i];
    rp[i] = calloc((size_t)outlets, sizeof **rp);
  }
  double *t = calloc((size_t)rounds, sizeof *t);
  for (int r = 0; r < rounds; r++) {
    uint64_t t0 = erg_time_monotonic_ns();
    int good = 0;
    char why[256];
    if (seq)
      for (size_t i = 0; i < n; i++)
        good += (rc[i] = erg_pdu_source_poll(sp[i], rp[i], why, sizeof why)) == 0;
    else
      good = erg_pdu_snmp_poll_many(sp, n, rp, rc, NULL, 0);
    t[r] = (erg_time_monotonic_ns() - t0) / 1e9;
    long vals = 0;
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < outlets; c++)
        vals += rp[i][c].ok;
    printf("round %d: %.3f s, %d/%zu PDUs, %ld outlets ok\n", r + 1, t[r], good, n, vals);
    fflush(stdout);
  }
  qsort(t, (size_t)rounds, sizeof *t, cmp_double);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("median %.3f s for %zu PDUs x %d outlets (%s), poller CPU %.2f s in %d rounds\n",
         t[rounds / 2], n, outlets, seq ? "sequential" : "poll_many",
         ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
             (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
         rounds);
  for (size_t i = 0; i < n; i++) {
    erg_pdu_source_close(sp[i]);
    free(rp[i]);
  }
  free(srcs);
  free(sp);
  free(rp);
  free(rc);
  free(t);
  return 0;
}
