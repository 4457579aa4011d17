/* Accuracy-harness load: one process named COMM that uses LOAD of one CPU
 * (0..1) for SECONDS, per schedule step "LOAD:SECONDS[,LOAD:SECONDS...]".
 * Burns LOAD x 100 ms of CPU time, then sleeps out the 100 ms period, so
 * two jobs with the same schedule are identical up to scheduling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define PERIOD_S 0.1

static double now_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void run_step(double load, double seconds) {
  double end = now_s(CLOCK_MONOTONIC) + seconds;
  while (now_s(CLOCK_MONOTONIC) < end) {
    double period_end = now_s(CLOCK_MONOTONIC) + PERIOD_S;
    double cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    while (now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0 < load * PERIOD_S &&
           now_s(CLOCK_MONOTONIC) < period_end)
      ;
    double rest = period_end - now_s(CLOCK_MONOTONIC);
    if (rest > 0) {
      struct timespec ts = {(time_t)rest, (long)((rest - (time_t)rest) * 1e9)};
      nanosleep(&ts, NULL);
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: duty COMM LOAD:SECONDS[,LOAD:SECONDS...]\n");
    return 1;
  }
  prctl(PR_SET_NAME, argv[1], 0, 0, 0);
  char *save;
  for (char *t = strtok_r(argv[2], ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    double load, seconds;
    if (sscanf(t, "%lf:%lf", &load, &seconds) != 2 || load < 0 || load > 1 || seconds < 0) {
      fprintf(stderr, "duty: bad step '%s'\n", t);
      return 1;
    }
    run_step(load, seconds);
  }
  return 0;
}
