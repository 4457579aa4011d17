// SPDX-License-Identifier: GPL-3.0-or-later
/* Real BPF: a busy process that has not left its CPU since it was first
 * switched in after the programs attached has no entry in the kernel's map
 * (entries are made when a slice ends). Drains must still report it, with
 * the time of that slice so far, in every drain: before the fix it was
 * missing until its first switch-out, which then charged the whole slice
 * (1.75 s in one 1 s interval of integration.agent_dump) at once.
 *
 * A child pinned to CPU 1 (SCHED_FIFO 1 where allowed, so ordinary tasks do
 * not preempt it) burns CPU from before the attach. Right after the attach
 * a nudger (SCHED_FIFO 2, also on CPU 1, blocked on a pipe since before)
 * wakes, preempts the child and blocks again: the child's switch-in is seen,
 * while it was neither woken nor charged, so it has no entry. (A sleep of
 * the child would not do: that switch-out creates the entry.) The parent drains
 * from CPU 0 every 20 ms and checks each drain against the child's own runtime
 * (its CPU-time clock): the reported time since the nudge must cover 90 %
 * of the runtime since the nudge (the defect reported none of it) and never
 * exceed the wall time (the slice in flight is wall time: it includes the
 * steal time the child's own clock leaves out), and the charged part must
 * never step back. Not all of the runtime: an unsettled drain lags by one;
 * CI saw 851 of 879 ms once, when an unseen switch still lost its slice. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bpf_test.h"

#define RUN_NS 1500000000ull

struct view {
  pid_t pid;
  uint64_t cpu_ns, running_ns;
  int seen;
};

static void on_proc(const struct erg_bpf_proc *p, void *user) {
  struct view *v = user;

  if (p->pid == (uint32_t)v->pid && !p->exited) {
    v->cpu_ns = p->cpu_ns;
    v->running_ns = p->running_ns;
    v->seen++;
  }
}

static void set_fifo(int prio) {
  struct sched_param sp = {.sched_priority = prio};

  sched_setscheduler(0, SCHED_FIFO, &sp); /* best effort: see main */
}

static pid_t spawn(int prio, int rfd, int wfd) {
  pid_t pid = fork();
  char c;

  erg_assert(pid >= 0, "fork");
  if (pid)
    return erg_test_child(pid);
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* and erg_kill_children after a failure */
  erg_child_assert(test_pin_try(1) == 0, "affinity 1: %s", strerror(errno));
  set_fifo(prio);
  erg_child_assert(write(wfd, "r", 1) == 1, "ready");
  if (rfd >= 0) /* the nudger: runs once per byte on the pipe */
    while (read(rfd, &c, 1) == 1)
      ;
  for (volatile uint64_t x = 0;; x++)
    ;
}

static void test_inflight(void **state) {
  struct view v = {0};
  struct erg_bpf_stats st;
  struct erg_bpf *b;
  uint64_t base_wall, base_run, base_rep = 0, last_rep = 0, last_run = 0, t_end, last_charged = 0;
  int ready[2], nudge[2], drains = 0;
  pid_t nudger;
  char c, why[256];

  (void)state;
  erg_assert(pipe(ready) == 0 && pipe(nudge) == 0, "pipe");
  test_pin(0);
  v.pid = spawn(1, -1, ready[1]);
  nudger = spawn(2, nudge[0], ready[1]);
  erg_assert(read(ready[0], &c, 1) == 1 && read(ready[0], &c, 1) == 1, "children ready");
  usleep(100000); /* the child runs well before the attach */
  b = test_bpf_open(NULL);
  erg_assert(write(nudge[1], "n", 1) == 1, "nudge");
  usleep(1000);
  /* The baseline drain: the child's slice started at most ~1 ms ago. Each
   * drain is bracketed by two readings of the child's clock. */
  base_wall = test_clock_ns(CLOCK_MONOTONIC);
  erg_assert(erg_bpf_drain(b, on_proc, &v, why, sizeof(why)) >= 0, "drain: %s", why);
  base_run = test_runtime_ns(v.pid);
  erg_bpf_stats(b, &st);
  erg_assert(v.seen == 1, "child not in the drain right after its switch-in (seen %d)", v.seen);
  /* Else this run did not test the case (something else switched the
   * child out in the ~1 ms window: rare on a quiet CPU 1). */
  if (st.running_only == 0)
    printf("note: the child had an entry already at the first drain\n");
  base_rep = last_rep = v.cpu_ns;
  last_charged = v.cpu_ns - v.running_ns;
  t_end = test_clock_ns(CLOCK_MONOTONIC) + RUN_NS;
  while (test_clock_ns(CLOCK_MONOTONIC) < t_end) {
    usleep(20000);
    uint64_t before = test_runtime_ns(v.pid);
    v.seen = 0;
    erg_assert(erg_bpf_drain(b, on_proc, &v, why, sizeof(why)) >= 0, "drain: %s", why);
    uint64_t after = test_runtime_ns(v.pid), wall = test_clock_ns(CLOCK_MONOTONIC);
    drains++;
    erg_assert(v.seen == 1, "drain %d: child seen %d times", drains, v.seen);
    /* Only the in-flight estimate may go back (steal time, see
     * test_bpf_drain.c), the charged part never. */
    erg_assert(v.cpu_ns - v.running_ns >= last_charged,
               "drain %d: charged time stepped back %.3f ms", drains,
               (last_charged - (v.cpu_ns - v.running_ns)) / 1e6);
    /* Reported since the baseline vs. what the child really ran meanwhile. */
    uint64_t rep = v.cpu_ns > base_rep ? v.cpu_ns - base_rep : 0;
    erg_bpf_stats(b, &st);
    erg_assert(rep + TEST_TICK_SLACK_NS >= 0.9 * (double)(before - base_run),
               "drain %d: %.1f ms reported, the child ran %.1f ms (%llu unseen switches, "
               "%llu unsettled so far)",
               drains, rep / 1e6, (before - base_run) / 1e6, (unsigned long long)st.unseen_switches,
               (unsigned long long)st.unsettled);
    erg_assert(rep <= wall - base_wall, "drain %d: %.1f ms reported in %.1f ms", drains, rep / 1e6,
               (wall - base_wall) / 1e6);
    last_rep = v.cpu_ns;
    last_charged = v.cpu_ns - v.running_ns;
    last_run = after;
  }
  erg_bpf_stats(b, &st);
  kill(v.pid, SIGKILL);
  kill(nudger, SIGKILL);
  waitpid(v.pid, NULL, 0);
  waitpid(nudger, NULL, 0);
  erg_bpf_close(b);
  printf("ok: %d drains, child reported %.0f ms of %.0f ms run since the nudge; "
         "%llu records of groups with no entry yet, %llu unseen switches, %llu unsettled\n",
         drains, (last_rep - base_rep) / 1e6, (last_run - base_run) / 1e6,
         (unsigned long long)st.running_only, (unsigned long long)st.unseen_switches,
         (unsigned long long)st.unsettled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_inflight, erg_kill_children),
  };

  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    erg_skip_all("needs 2 CPUs");
  test_bpf_require();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
