// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <time.h>

#include "erg_common.h"

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * ERG_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t erg_time_realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }
uint64_t erg_time_monotonic_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

void erg_time_sleep_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / ERG_NS_PER_S),
                        .tv_nsec = (long)(ns % ERG_NS_PER_S)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}
