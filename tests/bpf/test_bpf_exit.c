// SPDX-License-Identifier: GPL-3.0-or-later
/* Exit capture: 500 short children (~20 ms CPU each) must be charged,
 * through the exited records, with >= 99% of the CPU time wait4 reports for
 * them, while the collector drains every second. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bpf_test.h"

#define NCHILD 500
#define PARALLEL 8
#define KID_COMM "ergbpf_kid"
#define KID_NS 20000000ull

struct tally {
  uint64_t exited_ns, live_ns;
  int exited, live;
  int drains;
};

static void on_proc(const struct erg_bpf_proc *p, void *user) {
  struct tally *t = user;

  if (strcmp(p->comm, KID_COMM) != 0)
    return;
  if (p->exited) {
    t->exited_ns += p->cpu_ns;
    t->exited++;
  } else {
    t->live++;
    t->live_ns += p->cpu_ns;
  }
}

static void drain(struct erg_bpf *b, struct tally *t) {
  char why[256];

  t->live = 0;
  t->live_ns = 0;
  erg_assert(erg_bpf_drain(b, on_proc, t, why, sizeof(why)) >= 0, "drain: %s", why);
  t->drains++;
}

static pid_t kid_spawn(void) {
  pid_t pid = fork();

  erg_assert(pid >= 0, "fork: %s", strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_NAME, KID_COMM, 0, 0, 0);
    test_burn_ns(KID_NS);
    _exit(0);
  }
  return pid;
}

static uint64_t kid_reap(int flags) {
  struct rusage ru;
  int status;
  pid_t pid = wait4(-1, &status, flags, &ru);

  if (pid <= 0)
    return UINT64_MAX;
  erg_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
         ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static void test_exit_capture(void **state) {
  struct erg_bpf *b = test_bpf_open(NULL);
  struct tally t = {0};
  struct erg_bpf_stats st;
  uint64_t kids_ns = 0, next_drain, t0 = test_clock_ns(CLOCK_MONOTONIC);
  int forked = 0, alive = 0, reaped = 0;

  (void)state;
  next_drain = t0 + 1000000000ull;
  while (reaped < NCHILD) {
    while (alive < PARALLEL && forked < NCHILD) {
      kid_spawn();
      forked++;
      alive++;
    }
    {
      uint64_t ns = kid_reap(0);
      erg_assert(ns != UINT64_MAX, "wait4: %s", strerror(errno));
      kids_ns += ns;
      alive--;
      reaped++;
    }
    if (test_clock_ns(CLOCK_MONOTONIC) >= next_drain) {
      drain(b, &t);
      next_drain += 1000000000ull;
    }
  }
  /* wait4 returns at exit_notify; the children's last switch-out follows. */
  usleep(200000);
  drain(b, &t);
  erg_bpf_stats(b, &st);
  printf("children: %d in %.2f s, wait4 total %.1f ms; bpf exited records %d, "
         "%.1f ms (%.3f%%), still live %d; %d drains; map-full drops %llu, "
         "lost exit ns %llu\n",
         NCHILD, (test_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9, kids_ns / 1e6, t.exited,
         t.exited_ns / 1e6, 100.0 * (double)t.exited_ns / (double)kids_ns, t.live, t.drains,
         (unsigned long long)st.map_full_drops, (unsigned long long)st.lost_exit_ns);
  erg_assert(t.exited == NCHILD, "one exited record per child, got %d", t.exited);
  erg_assert(t.live == 0, "no child left live");
  erg_assert((double)t.exited_ns >= 0.99 * (double)kids_ns, "charged >= 99%%");
  erg_assert((double)t.exited_ns <= 1.03 * (double)kids_ns, "not double counted");
  erg_bpf_close(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exit_capture),
  };

  test_bpf_require();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
