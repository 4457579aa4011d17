// SPDX-License-Identifier: GPL-3.0-or-later
/* Real BPF: the unseen-switch repair. When the sched_switch tracepoint
 * misses a switch-in, the CPU's state names a group that is not running
 * there, and every drain would give the running task's slice in flight to
 * that group until the task next leaves its CPU (seconds, for a CPU hog on
 * a quiet CPU). erg_cpu_heal, on a software clock 4 times a second, puts the
 * CPU's state back on the running task with the start of its uncharged
 * runtime.
 *
 * The missed switch-in is made on purpose (white box): a child pinned to
 * CPU 1 at SCHED_FIFO 1 (ordinary tasks do not preempt it) burns CPU; the
 * test then writes CPU 1's state as if a made-up group had been switched in
 * there. 350 ms later (before RT throttling, 950 ms of each second, would
 * switch the child out and hide the defect) the child's reported time must
 * cover its runtime, and the made-up group must be gone. Without the repair
 * the child stays at what it had when the state was written (failed 4 runs
 * in 5 here; in the fifth something switched the child out in the window,
 * which repairs the state too).
 *
 * The switch-outs that follow are exact with per-thread records
 * (test_unseen_exact: to the ns, where the CPU state alone was 39 ms
 * short), and the task the state named is charged what it ran, not the
 * wall time of its lost slice (test_lost_slice; the fallback's charge of
 * that slice in test_lost_slice_no_records). */
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bpf_test.h"

#if ERG_HAVE_BPF
#include <bpf/bpf.h>

#include "erg_bpf_int.h"

#define FAKE_TGID 0x7ffffff0u

struct view {
  pid_t pid;
  uint64_t cpu_ns, running_ns, fake_ns;
  int seen, fake_seen;
};

static void on_proc(const struct erg_bpf_proc *p, void *user) {
  struct view *v = user;

  if (p->pid == (uint32_t)v->pid && !p->exited) {
    v->cpu_ns = p->cpu_ns;
    v->running_ns = p->running_ns;
    v->seen++;
  }
  if (p->pid == FAKE_TGID) {
    v->fake_ns = p->cpu_ns;
    v->fake_seen++;
  }
}

static void drain(struct erg_bpf *b, struct view *v) {
  char why[256];

  v->seen = v->fake_seen = 0;
  erg_assert(erg_bpf_drain(b, on_proc, v, why, sizeof(why)) >= 0, "drain: %s", why);
  erg_assert(v->seen == 1, "child seen %d times", v->seen);
}

static pid_t spawn_hog(void) {
  struct sched_param sp = {.sched_priority = 1};
  pid_t pid = fork();

  erg_assert(pid >= 0, "fork");
  if (pid)
    return erg_test_child(pid);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  erg_child_assert(test_pin_try(1) == 0, "affinity 1: %s", strerror(errno));
  erg_child_assert(sched_setscheduler(0, SCHED_FIFO, &sp) == 0, "SCHED_FIFO: %s", strerror(errno));
  for (volatile uint64_t x = 0;; x++)
    ;
}

/* CPU 1's state as if a switch-in of FAKE_TGID at `at` (before the child's
 * own switch-in there, as a real unseen switch-in follows the last seen
 * one) had been the last one seen there. Per-CPU maps are written for all
 * CPUs at once: CPU 0 (this process, in the system call) gets back what it
 * had. */
static void fake_switch_in(struct erg_bpf *b, uint64_t at, uint32_t tgid, uint64_t start_ns) {
  size_t sz = cpu_state_stride();
  char *st = calloc((size_t)b->ncpu, sz);
  uint32_t zero = 0;

  erg_assert(st && bpf_map_lookup_elem(b->fd.cpu_state, &zero, st) == 0, "read cpu_state");
  struct erg_cpu_state *s = (struct erg_cpu_state *)(st + sz);
  s->seq_begin++;
  s->seq_end = s->seq_begin;
  s->ts = at;
  s->key.tgid = tgid;
  s->key.start_ns = start_ns;
  s->task = 0;
  s->tid = tgid;
  s->runtime_in = 0;
  erg_assert(bpf_map_update_elem(b->fd.cpu_state, &zero, st, BPF_ANY) == 0, "write cpu_state");
  free(st);
}

/* The collector of the case running, closed by its teardown after a
 * failure (with the hog: erg_kill_children). */

static void run_case(const struct erg_bpf_opts *o) {
  struct view v = {0};
  struct erg_bpf_stats st0, st;
  struct erg_bpf *b;
  uint64_t run, at_fake;
  const char *why;

  test_pin(0);
  b = open_b = test_bpf_open(o);
  why = erg_bpf_heal_reason(b);
  erg_assert(!why, "no repair clock: %s", why);
  uint64_t forked = test_clock_ns(CLOCK_MONOTONIC);
  v.pid = spawn_hog();
  usleep(100000);
  drain(b, &v);
  erg_bpf_stats(b, &st0);
  fake_switch_in(b, forked, FAKE_TGID, 1);
  at_fake = v.cpu_ns;
  usleep(350000);
  drain(b, &v);
  uint64_t wall = test_clock_ns(CLOCK_MONOTONIC) - forked;
  run = test_runtime_ns(v.pid);
  erg_bpf_stats(b, &st);
  kill(v.pid, SIGKILL);
  waitpid(v.pid, NULL, 0);
  erg_bpf_close(b);
  open_b = NULL;
  printf("%s loader: child: %.1f ms reported (%.1f ms when the state was faked), ran %.1f ms; "
         "made-up group %s; unseen switches %llu -> %llu\n",
         o ? "libbpf" : "light", v.cpu_ns / 1e6, at_fake / 1e6, run / 1e6,
         v.fake_seen ? "still reported" : "gone", (unsigned long long)st0.unseen_switches,
         (unsigned long long)st.unseen_switches);
  erg_assert(v.cpu_ns + TEST_TICK_SLACK_NS >= run, "the child's slice in flight was not repaired");
  /* The charged part is runtime; the slice in flight is wall time (steal
   * time included: CI saw 420 ms reported for 405.7 ms run), so the total
   * is bounded by the wall time since the fork. */
  erg_assert(v.cpu_ns - v.running_ns <= run + TEST_TICK_SLACK_NS,
             "the child was charged more than it ran");
  erg_assert(v.cpu_ns <= wall, "the child got %.1f ms in %.1f ms", v.cpu_ns / 1e6, wall / 1e6);
  erg_assert(!v.fake_seen, "the made-up group still gets the child's time (%.1f ms)",
             v.fake_ns / 1e6);
  erg_assert(st.unseen_switches > st0.unseen_switches, "the repair was not counted");
}

static void test_light_loader(void **state) {
  (void)state;
  run_case(NULL);
}

/* Attaches the clock to the other skeleton's program. */
static void test_libbpf_loader(void **state) {
  struct erg_bpf_opts libbpf = {.libbpf_loader = true};

  (void)state;
  run_case(&libbpf);
}

struct sleeper {
  pid_t pid;
  uint64_t cpu_ns, start_ns;
  int seen;
};

static void on_sleeper(const struct erg_bpf_proc *p, void *user) {
  struct sleeper *z = user;

  if (p->pid == (uint32_t)z->pid && !p->exited) {
    z->cpu_ns = p->cpu_ns;
    z->start_ns = p->start_time_ns;
    z->seen++;
  }
}

static void drain_sleeper(struct erg_bpf *b, struct sleeper *z) {
  char why[256];

  z->seen = 0;
  erg_assert(erg_bpf_drain(b, on_sleeper, z, why, sizeof(why)) >= 0, "drain: %s", why);
  erg_assert(z->seen == 1, "sleeper seen %d times", z->seen);
}

/* The task the state names lost its switch-out as well. A sleeping child
 * stands for it, named on CPU 1 from 60 ms before the hog was forked.
 * With per-thread records its next switch-out charges whatever it ran, so
 * it must be charged exactly its runtime (~0), not the 60 ms of wall time.
 * Without them (older kernels) its slice from its recorded switch-in up to
 * the running task's start is charged to its group (charge_lost), else that
 * time would be lost: it must get those 60 ms (less scheduling delays). */
static void lost_slice_case(const struct erg_bpf_opts *o) {
  struct sleeper z = {0};
  struct erg_bpf *b;
  pid_t hog;

  test_pin(0);
  b = open_b = test_bpf_open(o);
  z.pid = fork();
  erg_assert(z.pid >= 0, "fork");
  if (!z.pid) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;)
      pause();
  }
  erg_test_child(z.pid);
  usleep(50000);
  drain_sleeper(b, &z);
  uint64_t before = z.cpu_ns, named = test_clock_ns(CLOCK_MONOTONIC);
  usleep(60000);
  hog = spawn_hog();
  usleep(100000);
  fake_switch_in(b, named, (uint32_t)z.pid, z.start_ns);
  usleep(350000);
  drain_sleeper(b, &z);
  uint64_t wall = test_clock_ns(CLOCK_MONOTONIC) - named, ran = test_runtime_ns(z.pid);
  bool records = !erg_bpf_thread_records_reason(b);
  kill(hog, SIGKILL);
  waitpid(hog, NULL, 0);
  kill(z.pid, SIGKILL);
  waitpid(z.pid, NULL, 0);
  erg_bpf_close(b);
  open_b = NULL;
  printf("lost slice (%s): the sleeper named on CPU 1 was charged %.3f ms (%.3f ms before); it "
         "ran %.3f ms\n",
         records ? "thread records" : "CPU state only", (z.cpu_ns - before) / 1e6, before / 1e6,
         ran / 1e6);
  if (records) {
    erg_assert(z.cpu_ns == ran, "the sleeper was charged %llu ns, it ran %llu ns",
               (unsigned long long)z.cpu_ns, (unsigned long long)ran);
    return;
  }
  erg_assert(z.cpu_ns - before >= 50000000ull, "the named task's lost slice was not charged");
  erg_assert(z.cpu_ns - before <= wall, "charged %.1f ms in %.1f ms", (z.cpu_ns - before) / 1e6,
             wall / 1e6);
}

static void test_lost_slice(void **state) {
  (void)state;
  lost_slice_case(NULL);
}

static void test_lost_slice_no_records(void **state) {
  struct erg_bpf_opts o = {.no_thread_records = true};

  (void)state;
  lost_slice_case(&o);
}

/* Stops v's child, drains what it was charged into v, ends the child and
 * closes b: returns the child's runtime at the stop (the truth). */
static uint64_t stop_drain_close(struct erg_bpf *b, struct view *v, const char *what) {
  int status;

  kill(v->pid, SIGSTOP);
  erg_assert(waitpid(v->pid, &status, WUNTRACED) == v->pid && WIFSTOPPED(status), "stop the %s",
             what);
  uint64_t run = test_runtime_ns(v->pid);
  drain(b, v);
  kill(v->pid, SIGKILL);
  waitpid(v->pid, NULL, 0);
  erg_bpf_close(b);
  open_b = NULL;
  return run;
}

/* With per-thread records an unseen switch-in costs nothing: the hog's
 * state is faked on CPU 1 as a made-up group switched in just now, so the
 * repair's estimate of the hog's slice (bounded by the time since the
 * CPU's last seen switch) misses the ~100 ms it ran before; the switch-out
 * at SIGSTOP must still charge its whole runtime, to the ns. Without the
 * records (the fallback) it is ~100 ms short. */
static void test_unseen_exact(void **state) {
  struct view v = {0};
  struct erg_bpf *b;

  (void)state;
  test_pin(0);
  b = open_b = test_bpf_open(NULL);
  if (erg_bpf_thread_records_reason(b)) {
    erg_bpf_close(b);
    open_b = NULL;
    skip();
  }
  v.pid = spawn_hog();
  usleep(100000);
  drain(b, &v);
  fake_switch_in(b, test_clock_ns(CLOCK_MONOTONIC), FAKE_TGID, 1);
  usleep(350000);
  uint64_t run = stop_drain_close(b, &v, "hog");
  printf("unseen switch-in: the stopped hog was charged %.6f ms, it ran %.6f ms\n", v.cpu_ns / 1e6,
         run / 1e6);
  erg_assert(v.running_ns == 0, "the stopped hog still runs (%llu ns)",
             (unsigned long long)v.running_ns);
  erg_assert(v.cpu_ns == run, "the hog was charged %lld ns off its runtime",
             (long long)(v.cpu_ns - run));
}

/* A thread slot as erg.bpf.c lays it out (struct erg_thread there). */
struct slot {
  uint64_t task, charged, used_ns;
  uint32_t tid, pad;
};

static void slot_write(struct erg_bpf *b, pid_t tid, const struct slot *v) {
  uint32_t i = (uint32_t)tid & 65535u;

  erg_assert(bpf_map_update_elem(b->fd.threads, &i, v, BPF_ANY) == 0, "write slot: %s",
             strerror(errno));
}

/* A thread whose slot another live thread holds (same tid mod 65536) is
 * charged without a record, and when the slot is free again it takes it
 * with its runtime then: its total must stay its runtime, never twice. A
 * child pinned to CPU 1 burns 2 ms and sleeps 0.5 ms in a loop; its slot
 * is given to a made-up owner for 300 ms, then freed. A claim that started
 * from 0 (or the made-up owner's charge) would be off by the whole runtime. */
static void test_slot_taken(void **state) {
  struct view v = {0};
  struct erg_bpf *b;

  (void)state;
  test_pin(0);
  b = open_b = test_bpf_open(NULL);
  v.pid = fork();
  erg_assert(v.pid >= 0, "fork");
  if (!v.pid) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    erg_child_assert(test_pin_try(1) == 0, "affinity 1: %s", strerror(errno));
    for (;;) {
      uint64_t t0 = test_clock_ns(CLOCK_MONOTONIC);
      while (test_clock_ns(CLOCK_MONOTONIC) - t0 < 2000000)
        ;
      usleep(500);
    }
  }
  erg_test_child(v.pid);
  usleep(100000);
  struct slot fake = {.task = 1,
                      .charged = 0,
                      .used_ns = test_clock_ns(CLOCK_MONOTONIC),
                      .tid = (uint32_t)v.pid + 65536u};
  slot_write(b, v.pid, &fake);
  usleep(300000);
  struct slot none = {0};
  slot_write(b, v.pid, &none);
  usleep(200000);
  uint64_t run = stop_drain_close(b, &v, "child");
  printf("slot taken for 300 ms: the child was charged %.6f ms, it ran %.6f ms\n", v.cpu_ns / 1e6,
         run / 1e6);
  /* Slices charged without a record are exact when their switch-in was
   * seen; an unseen one there is an estimate: 1 % of the runtime. */
  erg_assert(v.cpu_ns <= run + run / 100 && v.cpu_ns + run / 100 >= run,
             "the child was charged %.3f ms, it ran %.3f ms", v.cpu_ns / 1e6, run / 1e6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_light_loader, test_bpf_teardown),
      cmocka_unit_test_teardown(test_libbpf_loader, test_bpf_teardown),
      cmocka_unit_test_teardown(test_lost_slice, test_bpf_teardown),
      cmocka_unit_test_teardown(test_lost_slice_no_records, test_bpf_teardown),
      cmocka_unit_test_teardown(test_unseen_exact, test_bpf_teardown),
      cmocka_unit_test_teardown(test_slot_taken, test_bpf_teardown),
  };

  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    erg_skip_all("needs 2 CPUs");
  test_bpf_require();
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
int main(void) { erg_skip_all("built without BPF support"); }
#endif
