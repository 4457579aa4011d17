// SPDX-License-Identifier: GPL-3.0-or-later
/* A stand-in collector for the agent tests: binds a ZeroMQ PULL socket and
 * prints one line per message ("hello <node>", "sample <seq> <dropped>", or
 * "resent <seq> <dropped>" for a sample the agent sent again after a
 * reconnect) until it has run for the given number of seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

#include "erg_common.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: pull_probe ENDPOINT SECONDS\n");
    return 2;
  }
  void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_PULL);
  if (!sock || zmq_bind(sock, argv[1]) != 0) {
    fprintf(stderr, "pull_probe: cannot bind %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
    return 1;
  }
  uint64_t end = erg_time_monotonic_ns() + (uint64_t)(atof(argv[2]) * 1e9);
  uint8_t buf[1 << 20];
  while (erg_time_monotonic_ns() < end) {
    zmq_pollitem_t it = {sock, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, 100) <= 0)
      continue;
    int n = zmq_recv(sock, buf, sizeof buf, 0);
    const char *why = NULL;
    Erg__Envelope *env = n > 0 ? erg_wire_unpack(buf, (size_t)n, &why) : NULL;
    if (!env) {
      printf("bad %s\n", why ? why : "recv");
    } else if (env->body_case == ERG__ENVELOPE__BODY_HELLO) {
      printf("hello %s\n", env->hello->node);
    } else if (env->body_case == ERG__ENVELOPE__BODY_SAMPLE) {
      printf("%s %llu %llu\n", env->sample->resent ? "resent" : "sample",
             (unsigned long long)env->sample->seq,
             (unsigned long long)env->sample->dropped_samples);
    }
    fflush(stdout);
    erg_wire_free(env);
  }
  zmq_close(sock);
  zmq_ctx_term(ctx);
  return 0;
}
