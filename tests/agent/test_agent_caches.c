// SPDX-License-Identifier: GPL-3.0-or-later
/* Unit tests for the agent's caches of the eBPF path: a live process's
 * identity (identcache.c) never served for another process (a reused pid),
 * nor after the kernel's view of it changed, nor past its age; the cgroup
 * id -> path index (cgcache.c) against a plain model under evictions; the
 * rss a cached process gets from statm against status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../erg_test.h"
#include "agent_int.h"

static struct agent_ident ident(uint32_t pid, uint64_t start, uint64_t cg, const char *comm,
                                uint64_t now_ns) {
  struct agent_ident e = {
      .pid = pid, .start_ns = start, .cgroup_id = cg, .kuid = 1000, .uid = 1000, .read_ns = now_ns};
  erg_strlcpy(e.comm, comm, sizeof e.comm);
  snprintf(e.cgroup, sizeof e.cgroup, "/job_%u", pid);
  /* job, unit, container */
  snprintf(e.keys, sizeof e.keys, "%u%c%c", pid, 0, 0);
  return e;
}

/* Looked up at now with the kernel's view (cg, comm, kuid) taken at now. */
static const struct agent_ident *get(struct ident_cache *c, uint32_t pid, uint64_t start,
                                     uint64_t cg, const char *comm, uint32_t kuid, uint64_t now) {
  struct agent_ident kv = {.cgroup_id = cg, .kuid = kuid, .read_ns = now};
  erg_strlcpy(kv.comm, comm, sizeof kv.comm);
  return ident_get(c, pid, start, &kv, now);
}

/* A pid that now belongs to another process (another start time) never
 * gets the old one's identity; nor does the same process once its cgroup,
 * uid or name changed in the kernel's view, or once the entry is old. */
static void test_ident_stale(void **state) {
  (void)state;
  struct ident_cache *c = ident_new(0);
  uint64_t t = 5 * ERG_NS_PER_S;
  struct agent_ident e = ident(100, 111, 7, "job", t);
  ident_put(c, &e);
  const struct agent_ident *h = get(c, 100, 111, 7, "job", 1000, t + 1);
  assert_non_null(h);
  assert_string_equal(h->cgroup, "/job_100");
  assert_string_equal(h->keys, "100");
  assert_null(get(c, 100, 112, 7, "job", 1000, t + 1));  /* pid reused */
  assert_null(get(c, 101, 111, 7, "job", 1000, t + 1));  /* another pid */
  assert_null(get(c, 100, 111, 8, "job", 1000, t + 1));  /* moved */
  assert_null(get(c, 100, 111, 7, "job2", 1000, t + 1)); /* exec, rename */
  assert_null(get(c, 100, 111, 7, "job", 0, t + 1));     /* setuid */
  assert_null(get(c, 100, 111, 0, "job", 1000, t + 1));  /* no kernel view */
  assert_non_null(get(c, 100, 111, 7, "job", 1000, t + IDENT_MAX_AGE_NS - 1));
  assert_null(get(c, 100, 111, 7, "job", 1000, t + IDENT_MAX_AGE_NS));
  assert_null(get(c, 100, 111, 7, "job", 1000, t - 1)); /* clock before the read */
  /* The kernel's view older than the read (the process has not left its
   * CPU since: a move would not show), or older than a second. */
  struct agent_ident kv = {.cgroup_id = 7, .kuid = 1000, .comm = "job", .read_ns = t - 1};
  assert_null(ident_get(c, 100, 111, &kv, t + 1));
  kv.read_ns = t;
  assert_non_null(ident_get(c, 100, 111, &kv, t + IDENT_VIEW_MAX_AGE_NS));
  assert_null(ident_get(c, 100, 111, &kv, t + IDENT_VIEW_MAX_AGE_NS + 1));
  /* The reused pid's own read replaces nothing of the old process. */
  struct agent_ident n = ident(100, 112, 9, "other", t + 2);
  strcpy(n.cgroup, "/other");
  ident_put(c, &n);
  assert_string_equal(get(c, 100, 112, 9, "other", 1000, t + 3)->cgroup, "/other");
  assert_string_equal(get(c, 100, 111, 7, "job", 1000, t + 3)->cgroup, "/job_100");
  ident_drop(c, 100, 111); /* exited */
  assert_null(get(c, 100, 111, 7, "job", 1000, t + 3));
  assert_non_null(get(c, 100, 112, 9, "other", 1000, t + 3));
  assert_int_equal(ident_count(c), 1);
  /* One pid reused over and over in the same cgroup (the usual case): each
   * process gets its own entry, however their slots collide. */
  uint64_t starts[200];
  srand(3);
  for (int i = 0; i < 200; i++) {
    starts[i] = ((uint64_t)rand() << 20) ^ (uint64_t)rand(); /* boot time ns */
    struct agent_ident r = ident(42, starts[i], 7, "job", t);
    snprintf(r.cgroup, sizeof r.cgroup, "/run_%d", i);
    ident_put(c, &r);
  }
  for (int i = 0; i < 200; i++) {
    char want[32];
    snprintf(want, sizeof want, "/run_%d", i);
    assert_string_equal(get(c, 42, starts[i], 7, "job", 1000, t)->cgroup, want);
  }
  assert_null(get(c, 42, 1, 7, "job", 1000, t));
  ident_free(c);
  ident_free(NULL);
}

/* Full: a new process is not kept until entries have aged out. */
static void test_ident_bounded(void **state) {
  (void)state;
  struct ident_cache *c = ident_new(4);
  for (uint32_t pid = 1; pid <= 5; pid++) {
    struct agent_ident e = ident(pid, 1, 3, "x", ERG_NS_PER_S);
    ident_put(c, &e);
  }
  assert_int_equal(ident_count(c), 4);
  assert_null(get(c, 5, 1, 3, "x", 1000, ERG_NS_PER_S));
  struct agent_ident late = ident(6, 1, 3, "x", ERG_NS_PER_S + IDENT_MAX_AGE_NS);
  ident_put(c, &late);
  assert_int_equal(ident_count(c), 1);
  assert_non_null(get(c, 6, 1, 3, "x", 1000, late.read_ns));
  ident_free(c);
}

/* Random puts, drops and lookups with many colliding keys against a plain
 * array: the index stays exact through removals (entries move back in
 * their probe runs, the last entry fills the hole). */
static void test_ident_model(void **state) {
  (void)state;
  enum { N = 300 };
  struct ident_cache *c = ident_new(N);
  int live[N] = {0};
  uint64_t cg[N] = {0};
  srand(7);
  for (int step = 0; step < 20000; step++) {
    int k = rand() % N, op = rand() % 3;
    uint32_t pid = (uint32_t)(k % 37);   /* many pids repeat... */
    uint64_t start = (uint64_t)(k / 37); /* ...with other start times */
    if (op == 0) {
      struct agent_ident e = ident(pid, start, (uint64_t)step + 1, "m", 1);
      ident_put(c, &e);
      live[k] = 1;
      cg[k] = (uint64_t)step + 1;
    } else if (op == 1) {
      ident_drop(c, pid, start);
      live[k] = 0;
    }
    for (int j = 0; j < N; j += 17) {
      const struct agent_ident *h =
          get(c, (uint32_t)(j % 37), (uint64_t)(j / 37), cg[j] ? cg[j] : 1, "m", 1000, 2);
      assert_true(live[j] ? h && h->cgroup_id == cg[j] : h == NULL);
    }
  }
  size_t n = 0;
  for (int k = 0; k < N; k++)
    n += (size_t)live[k];
  assert_int_equal(ident_count(c), n);
  ident_free(c);
}

/* The hashed cgroup cache keeps exactly the last max ids put, whatever
 * their order and collisions. */
static void test_cgcache_model(void **state) {
  (void)state;
  enum { MAX = 50 };
  struct cgroup_cache *c = calloc(1, sizeof *c);
  c->max = MAX;
  uint64_t ring[MAX] = {0}; /* ids in put order, the oldest at the head */
  size_t head = 0, n = 0;
  srand(11);
  for (int step = 0; step < 5000; step++) {
    uint64_t id = (uint64_t)(rand() % 400 + 1) << (step % 2 ? 0 : 20);
    int known = 0;
    for (size_t i = 0; i < n; i++)
      known |= ring[(head + i) % MAX] == id;
    char path[32];
    snprintf(path, sizeof path, "/p%d", step);
    cgcache_put(c, id, path);
    if (!known) {
      if (n == MAX)
        head = (head + 1) % MAX;
      else
        n++;
      ring[(head + n - 1) % MAX] = id;
    }
    assert_string_equal(cgcache_find(c, id), path);
    for (size_t i = 0; i < n; i++)
      assert_non_null(cgcache_find(c, ring[(head + i) % MAX]));
    assert_true(c->n == n);
  }
  int found = 0;
  for (uint64_t id = 1; id <= 400; id++)
    found += cgcache_find(c, id) != NULL;
  for (uint64_t id = 1; id <= 400; id++)
    found += cgcache_find(c, id << 20) != NULL;
  assert_int_equal(found, MAX);
  cgcache_free(c);
}

/* statm's rss with status's RssShmem is status's RssAnon + RssFile. */
static void test_statm_rss(void **state) {
  (void)state;
  struct erg_agent *a = calloc(1, sizeof *a);
  strcpy(a->cfg.proc_root, "/proc");
  a->page_bytes = sysconf(_SC_PAGESIZE);
  a->procs = calloc(1, sizeof *a->procs);
  char buf[4096], path[64];
  struct erg_proc_status st;
  snprintf(path, sizeof path, "/proc/%d/status", getpid());
  assert_true(erg_read_file(path, buf, sizeof buf) > 0);
  assert_int_equal(erg_proc_parse_status(buf, &st), 0);
  agent_proc_rss(a, &a->procs[0], (uint32_t)getpid(), st.rss_shmem_bytes);
  uint64_t want = st.rss_anon_bytes + st.rss_file_bytes, got = a->procs[0].rss_bytes;
  /* The two reads are apart by a few pages of this process's own use. */
  assert_true(got + 64 * 4096 >= want && got <= want + 64 * 4096);
  /* An RssShmem larger than all of it leaves the anonymous part. */
  agent_proc_rss(a, &a->procs[0], (uint32_t)getpid(), UINT64_MAX / 2);
  assert_true(a->procs[0].rss_bytes > 0 && a->procs[0].rss_bytes <= got);
  agent_proc_rss(a, &a->procs[0], 0, 0); /* no such process */
  assert_int_equal(a->procs[0].rss_bytes, 0);
  free(a->procs);
  free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ident_stale), cmocka_unit_test(test_ident_bounded),
      cmocka_unit_test(test_ident_model), cmocka_unit_test(test_cgcache_model),
      cmocka_unit_test(test_statm_rss),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
