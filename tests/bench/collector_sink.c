// SPDX-License-Identifier: GPL-3.0-or-later
/* Reference peer for the collector benchmark: a ZeroMQ PULL sink that only
 * receives and counts messages (with --decode it also unpacks and validates
 * each one, as ergd does first). It exits after IDLE seconds without a
 * message, once one arrived, and prints its counts and its own CPU time.
 * usage: collector_sink ENDPOINT [IDLE=3] [--decode] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <zmq.h>

#include "erg_common.h"

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: collector_sink ENDPOINT [IDLE=3] [--decode]\n");
    return 1;
  }
  int idle = argc > 2 ? atoi(argv[2]) : 3;
  int decode = argc > 3 && !strcmp(argv[3], "--decode");
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  void *ctx = zmq_ctx_new();
  void *s = zmq_socket(ctx, ZMQ_PULL);
  int hwm = 100000, tmo = 200; /* ergd's receive high-water mark */
  zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &tmo, sizeof tmo);
  if (zmq_bind(s, argv[1]) != 0) {
    fprintf(stderr, "collector_sink: bind %s: %s\n", argv[1], zmq_strerror(errno));
    return 1;
  }
  double cpu0 = cpu_seconds();
  uint64_t msgs = 0, bytes = 0, procs = 0, bad = 0, last = 0;
  zmq_msg_t m;
  zmq_msg_init(&m);
  for (;;) {
    if (zmq_msg_recv(&m, s, 0) < 0) {
      uint64_t now = erg_time_monotonic_ns();
      if (msgs && now - last > (uint64_t)idle * ERG_NS_PER_S)
        break;
      continue;
    }
    msgs++;
    bytes += zmq_msg_size(&m);
    last = erg_time_monotonic_ns();
    if (!decode)
      continue;
    Erg__Envelope *env = erg_wire_unpack(zmq_msg_data(&m), zmq_msg_size(&m), NULL);
    if (!env)
      bad++;
    else if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE)
      procs += env->sample->n_procs;
    erg_wire_free(env);
  }
  zmq_msg_close(&m);
  double cpu = cpu_seconds() - cpu0;
  zmq_close(s);
  zmq_ctx_term(ctx);
  printf("sink messages=%llu bytes=%llu decoded_procs=%llu rejected=%llu cpu_s=%.3f\n",
         (unsigned long long)msgs, (unsigned long long)bytes, (unsigned long long)procs,
         (unsigned long long)bad, cpu);
  return 0;
}
