// SPDX-License-Identifier: GPL-3.0-or-later
/* Test load: N short-lived processes, each burning MS milliseconds of CPU
 * under the name COMM, at most PAR at a time. A "%d" in COMM is the
 * child's number (1..N): N distinct names. Prints the children's total
 * CPU time in ns as measured by the kernel for wait4. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void burn(double ms) {
  struct timespec t;
  double start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  start = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    now = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
  } while (now - start < ms);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: burner N MS COMM PAR\n");
    return 1;
  }
  int n = atoi(argv[1]), par = atoi(argv[4]), running = 0;
  double ms = atof(argv[2]);
  uint64_t total_ns = 0;
  for (int i = 0; i < n || running > 0;) {
    if (i < n && running < par) {
      pid_t pid = fork();
      if (pid == 0) {
        char name[64];
        const char *num = strstr(argv[3], "%d");
        if (num)
          snprintf(name, sizeof name, "%.*s%d%s", (int)(num - argv[3]), argv[3], i + 1, num + 2);
        else
          snprintf(name, sizeof name, "%s", argv[3]);
        prctl(PR_SET_NAME, name, 0, 0, 0);
        burn(ms);
        _exit(0);
      }
      if (pid > 0) {
        running++;
        i++;
      }
      continue;
    }
    struct rusage ru;
    int status;
    if (wait4(-1, &status, 0, &ru) > 0) {
      running--;
      total_ns += (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
                  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
    }
  }
  printf("%llu\n", (unsigned long long)total_ns);
  return 0;
}
