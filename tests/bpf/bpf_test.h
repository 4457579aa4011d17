// SPDX-License-Identifier: GPL-3.0-or-later
/* Helpers shared by the BPF tests: skip rules (exit 77) and CPU burning.
 * Assertions, the runner and the children a failed assertion would leave
 * running: ../erg_test.h (cmocka). */
#ifndef ERG_BPF_TEST_H
#define ERG_BPF_TEST_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../erg_test.h"
#include "erg_bpf.h"

static inline uint64_t test_clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keeps the calling thread on one CPU: 0, or -1 with errno. */
static inline int test_pin_try(int cpu) {
  cpu_set_t set;

  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set);
}

/* The same in the test itself (a forked child: erg_child_assert on
 * test_pin_try). */
static inline void test_pin(int cpu) {
  erg_assert(test_pin_try(cpu) == 0, "affinity %d: %s", cpu, strerror(errno));
}

/* Another process's CPU clock advances at the scheduler tick while it runs
 * (4 ms here, 10 ms at HZ=100), not continuously: compare with this slack. */
#define TEST_TICK_SLACK_NS 11000000ull

/* Process pid's on-CPU ns, up to its last tick (TEST_TICK_SLACK_NS). */
static inline uint64_t test_runtime_ns(pid_t pid) {
  clockid_t id;

  erg_assert(clock_getcpuclockid(pid, &id) == 0, "cpu clock of %d", (int)pid);
  return test_clock_ns(id);
}

/* Busy loop until this thread has used ns of CPU. */
static inline void test_burn_ns(uint64_t ns) {
  uint64_t end = test_clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
  volatile uint64_t x = 0;

  while (test_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
    for (int i = 0; i < 1000; i++)
      x += (uint64_t)i;
}

/* Exits 77 (erg_skip_all) when the environment cannot run BPF: not built
 * with BPF, not root, no kernel BTF, no bpf() system call. Called from main
 * before the runner starts, and again by test_bpf_open. */
static inline void test_bpf_require(void) {
#if !ERG_HAVE_BPF
  erg_skip_all("built without BPF support");
#endif
  if (geteuid() != 0)
    erg_skip_all("needs root (CAP_BPF, CAP_PERFMON)");
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    erg_skip_all("kernel without BTF");
  /* qemu-user (the aarch64 cross tests) has no bpf() system call. */
  if (syscall(__NR_bpf, -1, NULL, 0) < 0 && errno == ENOSYS)
    erg_skip_all("no bpf() system call (qemu-user?)");
}

/* Opens the BPF collector, or exits 77 where the environment cannot (see
 * test_bpf_require). Any other failure fails the test. */
static inline struct erg_bpf *test_bpf_open(const struct erg_bpf_opts *o) {
  struct erg_bpf *b = NULL;
  char why[256];

  test_bpf_require();
  erg_assert(erg_bpf_open(&b, o, why, sizeof(why)) == 0, "erg_bpf_open: %s", why);
  return b;
}

/* The collector a case has open: a case that fails before it closes it
 * leaves it to test_bpf_teardown, with the children it recorded
 * (erg_test_child), so the cases after it run alone. */
static struct erg_bpf *open_b __attribute__((unused));

static inline int test_bpf_teardown(void **state) {
  erg_kill_children(state);
  if (open_b)
    erg_bpf_close(open_b);
  open_b = NULL;
  return 0;
}

#endif
