// SPDX-License-Identifier: GPL-3.0-or-later
/* Real BPF: the direct-mapped group counters (docs/bpf.md "Maps",
 * `groups`). A group's counters live in its slot (tgid mod
 * ERG_BPF_GROUP_SLOTS) when that slot was free when they were made, else in
 * the procs hash; after a race between two CPUs, in both. White box: the
 * test writes the table (mmap'ed by the loader) and the hash itself.
 *
 * test_slot_held: every slot is held by a made-up group (tgid >= 2^22, no
 * real process) before a child is forked, so the child's group must go to
 * the hash: its time must be its runtime, and no made-up group may be
 * charged anything (a direct path that trusted the slot index without the
 * owner's key would charge them).
 *
 * test_slot_and_hash: a child's group in its slot gets a procs entry too
 * (as a racing CPU would make it, counted and its key in the ring as the
 * kernel does; the drain then reads procs by key, test_slot_held's many
 * entries by batch); the drain must report the sum, once per
 * drain, with the slot's name (renames land there), and after the exit
 * hand over one exited record and leave neither the entry nor the slot
 * behind. */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bpf_test.h"

#if ERG_HAVE_BPF
#include <bpf/bpf.h>

#include "erg_bpf_int.h"

#define FAKE_BASE (1u << 22) /* above pid_max's limit: no real tgid */
#define EXTRA_NS 1000000000ull
#define EXTRA_WAKEUPS 1000ull

struct view {
  pid_t pid;
  struct erg_bpf_proc last;
  int seen, exited, fake_seen;
  uint64_t fake_ns;
};

static void on_proc(const struct erg_bpf_proc *p, void *user) {
  struct view *v = user;

  if (p->pid == (uint32_t)v->pid) {
    v->last = *p;
    v->seen++;
    v->exited += p->exited;
  }
  if (p->pid >= FAKE_BASE) {
    v->fake_seen++;
    v->fake_ns += p->cpu_ns + p->wakeups;
  }
}

static uint64_t drain(struct erg_bpf *b, struct view *v) {
  char why[256];

  v->seen = v->exited = v->fake_seen = 0;
  v->fake_ns = 0;
  uint64_t t0 = test_clock_ns(CLOCK_MONOTONIC);
  erg_assert(erg_bpf_drain(b, on_proc, v, why, sizeof(why)) >= 0, "drain: %s", why);
  return test_clock_ns(CLOCK_MONOTONIC) - t0;
}

/* A child that burns 40 ms in 2 ms pieces with sleeps between (switch-outs
 * that charge it), says so on `ready`, waits for `go` to close, burns as
 * much again and exits. */
struct child {
  pid_t pid;
  int go, ready;
};

static void child_burn(void) {
  for (int i = 0; i < 20; i++) {
    test_burn_ns(2000000);
    usleep(300);
  }
}

static struct child child_start(void) {
  int go[2], ready[2];
  struct child c;
  char x = 0;

  erg_assert(pipe(go) == 0 && pipe(ready) == 0, "pipe");
  c.pid = fork();
  erg_assert(c.pid >= 0, "fork");
  if (!c.pid) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(go[1]);
    close(ready[0]);
    child_burn();
    erg_child_assert(write(ready[1], &x, 1) == 1, "write");
    erg_child_assert(read(go[0], &x, 1) == 0, "read");
    child_burn();
    _exit(0);
  }
  erg_test_child(c.pid);
  close(go[0]);
  close(ready[1]);
  erg_assert(read(ready[0], &x, 1) == 1, "child did not get ready");
  close(ready[0]);
  c.go = go[1];
  return c;
}

/* Lets the child finish; returns its runtime, read while it is a zombie. */
static uint64_t child_finish(struct child *c) {
  siginfo_t si;
  unsigned long long run = 0;
  char path[64];
  FILE *f;

  close(c->go);
  erg_assert(waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOWAIT) == 0, "waitid");
  usleep(20000); /* past its last switch-out */
  snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)c->pid);
  f = fopen(path, "r");
  erg_assert(f && fscanf(f, "%llu", &run) == 1, "read %s", path);
  fclose(f);
  return run;
}

static void child_reap(struct child *c) { waitpid(c->pid, NULL, 0); }

static struct erg_group *slot_of(struct erg_bpf *b, uint32_t tgid) {
  return &b->groups[tgid & (ERG_BPF_GROUP_SLOTS - 1)];
}

static void check_charged(uint64_t charged, uint64_t run, const char *what) {
  printf("%s: charged %.6f ms, ran %.6f ms\n", what, charged / 1e6, run / 1e6);
  /* Exact to the ns with per-thread records; 100 us of slack for a last
   * slice estimated without a record (an unseen switch). */
  erg_assert(charged <= run + 100000 && charged + 100000 >= run,
             "%s: charged %.3f ms, it ran %.3f ms", what, charged / 1e6, run / 1e6);
}

static void test_slot_held(void **state) {
  struct view v = {0};
  struct erg_bpf *b;

  (void)state;
  b = open_b = test_bpf_open(NULL);
  for (uint32_t i = 0; i < ERG_BPF_GROUP_SLOTS; i++) {
    struct erg_group *g = &b->groups[i];
    if (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) != ERG_GROUP_FREE)
      continue;
    memset(&g->c, 0, sizeof(g->c));
    g->key.tgid = FAKE_BASE + i;
    g->key.start_ns = 1;
    __atomic_fetch_or(&b->used->bits[i / 64], 1ull << (i % 64), __ATOMIC_RELEASE);
    __atomic_store_n(&g->state, ERG_GROUP_OWNED, __ATOMIC_RELEASE);
  }
  struct child c = child_start();
  v.pid = c.pid;
  uint64_t full_ns = drain(b, &v);
  printf("drain with every slot held: %.3f ms, %d made-up groups\n", full_ns / 1e6, v.fake_seen);
  erg_assert(v.seen == 1, "child seen %d times", v.seen);
  struct erg_key k = {.tgid = (uint32_t)c.pid, .start_ns = v.last.start_time_ns};
  struct erg_counts h;
  erg_assert(bpf_map_lookup_elem(b->fd.procs, &k, &h) == 0, "the child has no procs entry");
  erg_assert(slot_of(b, k.tgid)->key.tgid != k.tgid, "the child took a held slot");
  uint64_t run = child_finish(&c);
  drain(b, &v);
  child_reap(&c);
  erg_assert(v.seen == 1 && v.exited == 1, "child seen %d times, exited %d", v.seen, v.exited);
  check_charged(v.last.cpu_ns, run, "child beside held slots");
  erg_assert(v.fake_ns == 0, "made-up groups charged %llu", (unsigned long long)v.fake_ns);
  erg_assert(v.fake_seen >= (int)ERG_BPF_GROUP_SLOTS - 64, "%d made-up groups reported",
             v.fake_seen);
  erg_bpf_close(b);
  open_b = NULL;
}

static void test_slot_and_hash(void **state) {
  struct view v = {0};
  struct erg_bpf *b;

  (void)state;
  b = open_b = test_bpf_open(NULL);
  struct child c = child_start();
  v.pid = c.pid;
  uint64_t empty_ns = drain(b, &v);
  printf("drain with the table nearly empty: %.3f ms\n", empty_ns / 1e6);
  erg_assert(v.seen == 1, "child seen %d times", v.seen);
  struct erg_key k = {.tgid = (uint32_t)c.pid, .start_ns = v.last.start_time_ns};
  struct erg_group *g = slot_of(b, k.tgid);
  uint32_t si = k.tgid & (ERG_BPF_GROUP_SLOTS - 1);
  erg_assert(b->used->bits[si / 64] & (1ull << (si % 64)), "the child's slot has no bit");
  erg_assert(g->state == ERG_GROUP_OWNED && g->key.tgid == k.tgid && g->key.start_ns == k.start_ns,
             "the child's group is not in its slot (state %u, tgid %u)", g->state, g->key.tgid);
  uint64_t before = v.last.cpu_ns - v.last.running_ns;
  struct erg_counts h = {0};
  h.cpu_ns = EXTRA_NS;
  h.wakeups = EXTRA_WAKEUPS;
  h.meta_ns = UINT64_MAX / 2; /* newer than the slot's: its name must still win */
  memcpy(h.comm, "hashpart", 9);
  erg_assert(bpf_map_update_elem(b->fd.procs, &k, &h, BPF_NOEXIST) == 0, "procs entry: %s",
             strerror(errno));
  /* Counted and put in the ring as the kernel does with its own (the
   * drain reads procs by the keys it knows of). */
  uint64_t ri = __atomic_fetch_add(&b->used->procs_added, 1, __ATOMIC_ACQ_REL);
  struct erg_procs_ring_ent *re = &b->used->procs_ring[ri % ERG_PROCS_RING];
  __atomic_store_n(&re->seq, 0, __ATOMIC_RELEASE);
  re->key = k;
  __atomic_store_n(&re->seq, ri + 1, __ATOMIC_RELEASE);
  uint64_t batches = b->procs_batches;
  drain(b, &v);
  printf("procs read by key: %zu keys known, %llu batch reads\n", b->npkeys,
         (unsigned long long)(b->procs_batches - batches));
  erg_assert(b->procs_batches == batches || b->npkeys > 128, "procs batch-read with %zu keys known",
             b->npkeys);
  erg_assert(v.seen == 1, "child seen %d times", v.seen);
  erg_assert(strcmp(v.last.comm, "hashpart") != 0, "the procs part's name won");
  erg_assert(v.last.cpu_ns - v.last.running_ns >= before + EXTRA_NS,
             "slot and entry not added: %llu ns, had %llu", (unsigned long long)v.last.cpu_ns,
             (unsigned long long)before);
  uint64_t run = child_finish(&c);
  drain(b, &v);
  child_reap(&c);
  erg_assert(v.seen == 1 && v.exited == 1, "child seen %d times, exited %d", v.seen, v.exited);
  check_charged(v.last.cpu_ns - EXTRA_NS, run, "child in slot and procs");
  erg_assert(v.last.wakeups >= EXTRA_WAKEUPS + 20, "wakeups %llu",
             (unsigned long long)v.last.wakeups);
  drain(b, &v);
  erg_assert(v.seen == 0, "the exited child reported again (%d)", v.seen);
  erg_assert(bpf_map_lookup_elem(b->fd.procs, &k, &h) != 0, "its procs entry left behind");
  erg_assert(b->procs_deleted >= 1, "procs deletes not counted (%llu)",
             (unsigned long long)b->procs_deleted);
  erg_assert(g->state == ERG_GROUP_FREE, "its slot not freed (state %u)", g->state);
  uint32_t i = k.tgid & (ERG_BPF_GROUP_SLOTS - 1);
  erg_assert(!(b->used->bits[i / 64] & (1ull << (i % 64))), "its slot's bit left set");
  erg_bpf_close(b);
  open_b = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_slot_held, test_bpf_teardown),
      cmocka_unit_test_teardown(test_slot_and_hash, test_bpf_teardown),
  };

  test_bpf_require();
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
int main(void) { erg_skip_all("built without BPF support"); }
#endif
