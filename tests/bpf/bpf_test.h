/* Helpers shared by the BPF tests: skip rules (exit 77) and CPU burning. */
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

#include "erg_bpf.h"

#define SKIP_CODE 77

#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                    \
      fprintf(stderr, __VA_ARGS__);                                                      \
      fputc('\n', stderr);                                                               \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static inline uint64_t test_clock_ns(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keeps the calling thread on one CPU. */
static inline void test_pin(int cpu)
{
  cpu_set_t set;

  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "affinity %d", cpu);
}

/* Another process's CPU clock advances at the scheduler tick while it runs
 * (4 ms here, 10 ms at HZ=100), not continuously: compare with this slack. */
#define TEST_TICK_SLACK_NS 11000000ull

/* Process pid's on-CPU ns, up to its last tick (TEST_TICK_SLACK_NS). */
static inline uint64_t test_runtime_ns(pid_t pid)
{
  clockid_t id;

  CHECK(clock_getcpuclockid(pid, &id) == 0, "cpu clock of %d", (int)pid);
  return test_clock_ns(id);
}

/* Busy loop until this thread has used ns of CPU. */
static inline void test_burn_ns(uint64_t ns)
{
  uint64_t end = test_clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
  volatile uint64_t x = 0;

  while (test_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
    for (int i = 0; i < 1000; i++)
      x += (uint64_t)i;
}

/* Opens the BPF collector or exits 77 when the environment cannot: not built
 * with BPF, not root, no kernel BTF. Any other failure fails the test. */
static inline struct erg_bpf *test_bpf_open(const struct erg_bpf_opts *o)
{
  struct erg_bpf *b;
  char why[256];

#if !ERG_HAVE_BPF
  printf("SKIP: built without BPF support\n");
  exit(SKIP_CODE);
#endif
  if (geteuid() != 0) {
    printf("SKIP: needs root (CAP_BPF, CAP_PERFMON)\n");
    exit(SKIP_CODE);
  }
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    printf("SKIP: kernel without BTF\n");
    exit(SKIP_CODE);
  }
  /* qemu-user (the aarch64 cross tests) has no bpf() system call. */
  if (syscall(__NR_bpf, -1, NULL, 0) < 0 && errno == ENOSYS) {
    printf("SKIP: no bpf() system call (qemu-user?)\n");
    exit(SKIP_CODE);
  }
  if (erg_bpf_open(&b, o, why, sizeof(why)) != 0) {
    fprintf(stderr, "FAIL: erg_bpf_open: %s\n", why);
    exit(1);
  }
  return b;
}

#endif
