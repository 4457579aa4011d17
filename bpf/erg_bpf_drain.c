// SPDX-License-Identifier: GPL-3.0-or-later
/* Drain of the group counters for erg_bpf.c: procs read by key (or a batch
 * read) and the groups table in place, the slices running right now added
 * consistently, callbacks, exited groups deleted. */
#include "erg_bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "erg_bpf_int.h"

#define DRAIN_CHUNK 1024

static int drain_reserve(struct erg_bpf *b, size_t need) {
  struct erg_key *k;
  struct erg_counts *v;
  size_t cap = b->cap ? b->cap : DRAIN_CHUNK;

  if (need <= b->cap)
    return 0;
  while (cap < need)
    cap *= 2;
  k = realloc(b->keys, cap * sizeof(*k));
  if (!k)
    return -1;
  b->keys = k;
  v = realloc(b->vals, cap * sizeof(*v));
  if (!v)
    return -1;
  b->vals = v;
  uint64_t *r = realloc(b->running, cap * sizeof(*r));
  if (!r)
    return -1;
  b->running = r;
  b->cap = cap;
  return 0;
}

/* Fallback for kernels without batch ops on hash maps (before 5.6). */
static long drain_read_iter(struct erg_bpf *b, int fd) {
  struct erg_key key, next, *prev = NULL;
  size_t n = 0;

  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    if (drain_reserve(b, n + 1))
      return -1;
    if (bpf_map_lookup_elem(fd, &next, &b->vals[n]) == 0)
      b->keys[n++] = next;
    key = next;
    prev = &key;
  }
  return (long)n;
}

/* procs holds no entry: the kernel made as many as the drain deleted
 * (erg_group_used). An entry made from userspace (tests) without counting
 * it makes the deletes outnumber the count: not empty, then. */
static bool procs_empty(const struct erg_bpf *b) {
  return __atomic_load_n(&b->used->procs_added, __ATOMIC_ACQUIRE) == b->procs_deleted;
}

/* ---- the keys in procs ----
 * Most groups live in their groups slot; procs holds the few whose slot
 * another group held (a handful under process churn), and a batch read
 * walks all its 32,768 buckets whatever the count. So the drain keeps the
 * keys that are in procs: those of its last batch read, plus each entry
 * the kernel made since (its ring, erg_group_used), less those it deleted,
 * and looks each up by key. */
#define PKEYS_BY_KEY_MAX 128 /* more: one batch read is cheaper */

static long pkeys_find(const struct erg_bpf *b, const struct erg_key *k) {
  for (size_t i = 0; i < b->npkeys; i++)
    if (b->pkeys[i].tgid == k->tgid && b->pkeys[i].start_ns == k->start_ns)
      return (long)i;
  return -1;
}

static int pkeys_add(struct erg_bpf *b, const struct erg_key *k) {
  if (pkeys_find(b, k) >= 0)
    return 0;
  if (b->npkeys == b->pkeys_cap) {
    size_t cap = b->pkeys_cap ? 2 * b->pkeys_cap : 64;
    struct erg_key *p = realloc(b->pkeys, cap * sizeof(*p));
    if (!p)
      return -1;
    b->pkeys = p;
    b->pkeys_cap = cap;
  }
  b->pkeys[b->npkeys++] = *k;
  return 0;
}

static void pkeys_remove(struct erg_bpf *b, const struct erg_key *k) {
  long i = pkeys_find(b, k);

  if (i >= 0)
    b->pkeys[i] = b->pkeys[--b->npkeys];
}

/* Takes the ring's keys from ring_next up to n_added into pkeys; false
 * when one of them is not there to take (lapped: more than ERG_PROCS_RING
 * entries made since the last drain; or being written now, or made from
 * userspace), and only a batch read can tell which keys procs holds. */
static bool pkeys_from_ring(struct erg_bpf *b, uint64_t n_added) {
  if (n_added - b->ring_next > ERG_PROCS_RING)
    return false;
  for (uint64_t i = b->ring_next; i < n_added; i++) {
    const struct erg_procs_ring_ent *e = &b->used->procs_ring[i % ERG_PROCS_RING];
    struct erg_key k;
    if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != i + 1)
      return false;
    memcpy(&k, (const void *)&e->key, sizeof(k));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != i + 1 || pkeys_add(b, &k))
      return false;
  }
  return true;
}

/* The procs entries of the keys in pkeys, one lookup each. */
static long drain_read_keys(struct erg_bpf *b) {
  size_t n = 0;

  if (drain_reserve(b, b->npkeys))
    return -1;
  for (size_t i = 0; i < b->npkeys;) {
    if (bpf_map_lookup_elem(b->fd.procs, &b->pkeys[i], &b->vals[n]) == 0) {
      b->keys[n++] = b->pkeys[i++];
      continue;
    }
    if (errno != ENOENT)
      return -1;
    b->pkeys[i] = b->pkeys[--b->npkeys]; /* not there (never was: a test's entry) */
  }
  return (long)n;
}

static long drain_read_batch(struct erg_bpf *b) {
  int fd = b->fd.procs;
  LIBBPF_OPTS(bpf_map_batch_opts, o);
  struct erg_key token; /* hash batch token is a bucket index, key size is ample */
  size_t n = 0;
  bool first = true;

  b->procs_batches++;

  for (;;) {
    __u32 count = DRAIN_CHUNK;
    int err;
    if (drain_reserve(b, n + DRAIN_CHUNK))
      return -1;
    err = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, &b->keys[n], &b->vals[n], &count,
                               &o);
    if (err && errno != ENOENT)
      return (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
                 ? drain_read_iter(b, fd)
                 : -1;
    n += count;
    first = false;
    if (err)
      return (long)n;
  }
}

/* The records in procs: by key while the drain knows the keys (few), else
 * one batch read, which tells it the keys again. The count is read before
 * the batch: an entry counted by then is in the map (the kernel counts
 * after the insert), one made later comes from the ring next time. */
static long drain_read(struct erg_bpf *b) {
  uint64_t n_added = __atomic_load_n(&b->used->procs_added, __ATOMIC_ACQUIRE);
  long n;

  if (pkeys_from_ring(b, n_added) && b->npkeys <= PKEYS_BY_KEY_MAX) {
    b->ring_next = n_added;
    return drain_read_keys(b);
  }
  n = drain_read_batch(b);
  if (n < 0)
    return n;
  b->npkeys = 0;
  for (long i = 0; i < n; i++)
    if (pkeys_add(b, &b->keys[i]))
      return -1;
  b->ring_next = n_added;
  return n;
}

/* Marks the n records read from procs as such and appends the groups that
 * own a slot of the groups table, read in place (mmap), found by their bits
 * in groups_used. Only this drain frees a slot, so an owned slot keeps its
 * owner while it is copied. */
static long drain_read_slots(struct erg_bpf *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    b->vals[i].flags |= ERG_FLAG_IN_HASH;
  for (uint32_t w = 0; w < ERG_BPF_GROUP_SLOTS / 64; w++) {
    uint64_t bits = __atomic_load_n(&b->used->bits[w], __ATOMIC_ACQUIRE);
    while (bits) {
      const struct erg_group *g = &b->groups[w * 64 + (uint32_t)__builtin_ctzll(bits)];
      bits &= bits - 1;
      if (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) != ERG_GROUP_OWNED)
        continue;
      if (drain_reserve(b, n + 1))
        return -1;
      b->keys[n] = g->key;
      memcpy(&b->vals[n], &g->c, sizeof(b->vals[n]));
      b->vals[n].flags |= ERG_FLAG_IN_SLOT;
      n++;
    }
  }
  return (long)n;
}

static int key_cmp(const void *a, const void *b) {
  const struct erg_key *x = a, *y = b;

  if (x->tgid != y->tgid)
    return x->tgid < y->tgid ? -1 : 1;
  return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Finds the record of key among the n sorted keys. */
static long key_find(const struct erg_key *keys, size_t n, const struct erg_key *k) {
  const struct erg_key *f = bsearch(k, keys, n, sizeof(*k), key_cmp);
  return f ? f - keys : -1;
}

static void sort_records(struct erg_bpf *b, size_t n) {
  /* Sort keys and values together: sort an index, then permute. */
  struct pair {
    struct erg_key k;
    struct erg_counts v;
  } *p = malloc(n * sizeof(*p));

  if (!p)
    return;
  for (size_t i = 0; i < n; i++) {
    p[i].k = b->keys[i];
    p[i].v = b->vals[i];
  }
  qsort(p, n, sizeof(*p), key_cmp); /* key is the first member */
  for (size_t i = 0; i < n; i++) {
    b->keys[i] = p[i].k;
    b->vals[i] = p[i].v;
  }
  free(p);
}

static bool key_eq(const struct erg_key *x, const struct erg_key *y) {
  return x->tgid == y->tgid && x->start_ns == y->start_ns;
}

static void freq_slot_add(struct erg_counts *c, uint32_t khz, uint64_t d) {
  for (int i = 0; i < ERG_BPF_NFREQ; i++) {
    if (c->freq_khz[i] == 0)
      c->freq_khz[i] = khz;
    if (c->freq_khz[i] == khz) {
      c->freq_ns[i] += d;
      return;
    }
  }
  c->freq_other_ns += d;
}

/* A group's counters in both its slot and procs (two CPUs made them at
 * once): the sum. The identity is the slot's: once the slot is owned every
 * lookup finds it first, so renames and refreshes land there (a rename
 * does not move meta_ns). */
static void counts_merge(struct erg_counts *d, const struct erg_counts *s) {
  d->cpu_ns += s->cpu_ns;
  d->wakeups += s->wakeups;
  d->migrations += s->migrations;
  d->read_bytes += s->read_bytes;
  d->write_bytes += s->write_bytes;
  d->cycles += s->cycles;
  d->instructions += s->instructions;
  d->llc_misses += s->llc_misses;
  for (int i = 0; i < ERG_BPF_NCAP; i++)
    d->cap_ns[i] += s->cap_ns[i];
  for (int i = 0; i < ERG_BPF_NFREQ; i++)
    if (s->freq_khz[i])
      freq_slot_add(d, s->freq_khz[i], s->freq_ns[i]);
  d->freq_other_ns += s->freq_other_ns;
  if ((s->flags & ERG_FLAG_IN_SLOT) ||
      (!(d->flags & ERG_FLAG_IN_SLOT) && s->meta_ns > d->meta_ns)) {
    d->meta_ns = s->meta_ns;
    memcpy(d->comm, s->comm, sizeof(d->comm));
    d->uid = s->uid;
    d->cgroup_id = s->cgroup_id;
  }
  if (!d->cgroup_v1_id)
    d->cgroup_v1_id = s->cgroup_v1_id;
  d->flags |= s->flags;
}

/* Sorted records of one group (slot and procs) become one. */
static size_t merge_records(struct erg_bpf *b, size_t n) {
  size_t m = 0;

  for (size_t i = 0; i < n; i++) {
    if (m && key_eq(&b->keys[m - 1], &b->keys[i])) {
      counts_merge(&b->vals[m - 1], &b->vals[i]);
      continue;
    }
    if (m != i) {
      b->keys[m] = b->keys[i];
      b->vals[m] = b->vals[i];
    }
    m++;
  }
  return m;
}

static struct erg_group *group_slot(const struct erg_bpf *b, const struct erg_key *k) {
  return &b->groups[k->tgid & (ERG_BPF_GROUP_SLOTS - 1)];
}

/* Group k's counters now: its procs entry, its slot, or both added; -1
 * with errno ENOENT when it has neither. */
static int group_lookup(const struct erg_bpf *b, const struct erg_key *k, struct erg_counts *v) {
  const struct erg_group *g = group_slot(b, k);
  struct erg_counts h;
  bool in_hash = false, in_slot = false;

  if (!procs_empty(b)) {
    in_hash = bpf_map_lookup_elem(b->fd.procs, k, &h) == 0;
    if (!in_hash && errno != ENOENT)
      return -1;
  }
  if (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) == ERG_GROUP_OWNED && key_eq(&g->key, k)) {
    memcpy(v, &g->c, sizeof(*v));
    v->flags |= ERG_FLAG_IN_SLOT;
    in_slot = true;
  }
  if (in_hash) {
    h.flags |= ERG_FLAG_IN_HASH;
    if (in_slot)
      counts_merge(v, &h);
    else
      *v = h;
  }
  if (!in_hash && !in_slot) {
    errno = ENOENT;
    return -1;
  }
  return 0;
}

/* After the group's exited record is handed over: its slot is free for the
 * next group (which zeroes it when it claims it). */
static void slot_free(struct erg_bpf *b, const struct erg_key *k) {
  struct erg_group *g = group_slot(b, k);
  uint32_t i = k->tgid & (ERG_BPF_GROUP_SLOTS - 1);

  if (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) != ERG_GROUP_OWNED || !key_eq(&g->key, k))
    return;
  /* The bit first: the next claim sets it again after this store. */
  __atomic_fetch_and(&b->used->bits[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);
  __atomic_store_n(&g->state, ERG_GROUP_FREE, __ATOMIC_RELEASE);
}

/* ---- slices in flight ----
 * A drain adds the slices running right now, so that a process that never
 * leaves its CPU still advances. The process map and the per-CPU state are
 * read at different instants, and a slice that ends in between is in the
 * map or not depending on when its entry was copied: counted twice or not
 * at all, the process's cumulative time would step back and the next
 * interval would get up to a whole slice too much. So the per-CPU state is
 * read before and after the map: a slice that is the same in both (same
 * start, same group; every switch writes a new start) was running during the
 * whole read and is not in the map. Groups whose slice changed in between
 * are re-read alone inside a short window of their own. */
static uint64_t clock_mono_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct erg_cpu_state *snap_cpu(const char *st, int c) {
  return (const void *)(st + cpu_state_stride() * (size_t)c);
}

/* No switch was writing this CPU's state while it was copied. */
static bool state_whole(const struct erg_cpu_state *s) { return s->seq_begin == s->seq_end; }

/* Reads every CPU's state; a CPU caught in the middle of a switch (a few
 * hundred ns) is read again, keeping the first whole copy, up to 8 times. */
static int cpu_snapshot(struct erg_bpf *b, char *st) {
  size_t sz = cpu_state_stride();
  uint32_t zero = 0;

  if (bpf_map_lookup_elem(b->fd.cpu_state, &zero, st))
    return -1;
  for (int attempt = 0; attempt < 8; attempt++) {
    bool torn = false;
    for (int c = 0; c < b->ncpu; c++)
      torn |= !state_whole(snap_cpu(st, c));
    if (!torn)
      return 0;
    if (bpf_map_lookup_elem(b->fd.cpu_state, &zero, b->snap_tmp))
      return -1;
    for (int c = 0; c < b->ncpu; c++)
      if (!state_whole(snap_cpu(st, c)) && state_whole(snap_cpu(b->snap_tmp, c)))
        memcpy(st + sz * (size_t)c, b->snap_tmp + sz * (size_t)c, sz);
  }
  return 0;
}

/* Same slice in both snapshots, both whole: no switch began in between. */
static bool slice_same(const struct erg_cpu_state *x, const struct erg_cpu_state *y) {
  return state_whole(x) && state_whole(y) && x->seq_end == y->seq_end;
}

/* Adds the part up to now of each slice of key in st to v (and to *run). */
static void running_add(const struct erg_bpf *b, const char *st, const struct erg_key *key,
                        uint64_t now, struct erg_counts *v, uint64_t *run) {
  if (v->flags & ERG_FLAG_EXITED)
    return;
  for (int c = 0; c < b->ncpu; c++) {
    const struct erg_cpu_state *s = snap_cpu(st, c);
    uint64_t d = now - s->ts;
    if (!state_whole(s) || !s->ts || now <= s->ts || !key_eq(&s->key, key))
      continue;
    v->cpu_ns += d;
    *run += d;
    if ((b->features & ERG_BPF_F_CAPACITY) && b->cpu_class[c] < ERG_BPF_NCAP)
      v->cap_ns[b->cpu_class[c]] += d;
    if ((b->features & ERG_BPF_F_FREQ) && b->freq[c])
      freq_slot_add(v, b->freq[c], d);
  }
}

/* One group read between two snapshots; retried while one of its slices
 * keeps ending inside the window (a few microseconds). If it never settles,
 * its closed slices alone are kept: this drain undercounts a little and the
 * next one catches up. */
static void group_reread(struct erg_bpf *b, size_t i) {
  const struct erg_key *k = &b->keys[i];
  struct erg_counts v;

  for (int attempt = 0; attempt < 8; attempt++) {
    bool same = true;
    uint64_t now;
    if (cpu_snapshot(b, b->snap[0]))
      return;
    /* A group that only ever ran in one slice has no entry until that
     * slice ends: it is all in flight, and its record is still the empty
     * one running_only_add made (running_add has not touched it yet). */
    if (group_lookup(b, k, &v)) {
      if (errno != ENOENT || !(b->vals[i].flags & ERG_FLAG_UNSEEN_GROUP))
        return;
      v = b->vals[i];
    }
    now = clock_mono_ns();
    if (cpu_snapshot(b, b->snap[1]))
      return;
    b->vals[i] = v;
    /* A CPU still torn may be charging this group right now. */
    for (int c = 0; c < b->ncpu; c++) {
      const struct erg_cpu_state *sa = snap_cpu(b->snap[0], c);
      if (!state_whole(sa) || (key_eq(&sa->key, k) && !slice_same(sa, snap_cpu(b->snap[1], c))))
        same = false;
    }
    if (same) {
      b->running[i] = 0;
      running_add(b, b->snap[0], k, now, &b->vals[i], &b->running[i]);
      return;
    }
  }
  b->unsettled++;
}

/* The group leader's name from /proc, for a group the kernel has no entry
 * of yet; empty if it is gone. */
static void comm_from_proc(uint32_t pid, char *comm, size_t len) {
  char path[64];
  FILE *f;

  comm[0] = '\0';
  snprintf(path, sizeof(path), "/proc/%u/comm", pid);
  f = fopen(path, "re");
  if (!f)
    return;
  if (fgets(comm, (int)len, f))
    comm[strcspn(comm, "\n")] = '\0';
  fclose(f);
}

/* The kernel creates a group's entry when one of its slices ends. A busy
 * process that was switched in after the programs attached and has not left
 * its CPU since has none: it would be missing from every drain until its
 * first switch-out, which then charges the whole slice (seconds, on an idle
 * node) to one interval. So each group running in snapshot A without an
 * entry gets an empty record here; drain_settle adds its slice in flight
 * like any other. Returns the new record count (records stay sorted). */
static size_t running_only_add(struct erg_bpf *b, size_t n) {
  size_t m = n;

  for (int c = 0; c < b->ncpu; c++) {
    const struct erg_cpu_state *s = snap_cpu(b->snap[0], c);
    if (!state_whole(s) || !s->key.tgid || !s->ts || key_find(b->keys, n, &s->key) >= 0)
      continue;
    bool dup = false;
    for (size_t j = n; j < m; j++)
      dup |= key_eq(&b->keys[j], &s->key);
    if (dup || drain_reserve(b, m + 1))
      continue;
    b->keys[m] = s->key;
    memset(&b->vals[m], 0, sizeof(b->vals[m]));
    b->vals[m].flags = ERG_FLAG_UNSEEN_GROUP;
    comm_from_proc(s->key.tgid, b->vals[m].comm, sizeof(b->vals[m].comm));
    m++;
  }
  if (m > n)
    sort_records(b, m);
  b->running_only += m - n;
  return m;
}

/* snap[0] was taken before the map read, snap[1] after it, now in between
 * (after the map, before snap[1]). */
static void drain_settle(struct erg_bpf *b, size_t n, uint64_t now) {
  long *redo = b->redo;
  int nredo = 0;

  if (n)
    memset(b->running, 0, n * sizeof(*b->running));
  for (int c = 0; c < b->ncpu; c++) {
    const struct erg_cpu_state *s0 = snap_cpu(b->snap[0], c);
    long i = s0->key.tgid && s0->ts ? key_find(b->keys, n, &s0->key) : -1;
    /* Torn even after re-reads: whose slice ended here is unknown. */
    if (!state_whole(s0))
      b->unsettled++;
    else if (i >= 0 && !slice_same(s0, snap_cpu(b->snap[1], c)))
      redo[nredo++] = i;
  }
  for (int c = 0; c < b->ncpu; c++) {
    const struct erg_cpu_state *s0 = snap_cpu(b->snap[0], c);
    long i = state_whole(s0) && s0->key.tgid && s0->ts ? key_find(b->keys, n, &s0->key) : -1;
    bool again = false;
    for (int r = 0; r < nredo; r++)
      again |= redo[r] == i;
    /* Only the slices of CPU c: running_add walks all CPUs of the key, so
     * each key is handled once, at its first whole CPU. */
    for (int e = 0; e < c && i >= 0; e++)
      if (state_whole(snap_cpu(b->snap[0], e)) && key_eq(&snap_cpu(b->snap[0], e)->key, &s0->key))
        i = -1;
    if (i >= 0 && !again)
      running_add(b, b->snap[0], &s0->key, now, &b->vals[i], &b->running[i]);
  }
  for (int r = 0; r < nredo; r++) {
    bool dup = false;
    for (int e = 0; e < r; e++)
      dup |= redo[e] == redo[r];
    if (!dup)
      group_reread(b, (size_t)redo[r]);
  }
}

static void proc_fill(const struct erg_bpf *b, const struct erg_key *k, const struct erg_counts *c,
                      uint64_t running, struct erg_bpf_proc *p) {
  memset(p, 0, sizeof(*p));
  p->pid = k->tgid;
  p->start_time_ns = k->start_ns;
  memcpy(p->comm, c->comm, sizeof(p->comm));
  p->comm[sizeof(p->comm) - 1] = '\0';
  p->uid = c->uid;
  p->cgroup_id = c->cgroup_id;
  p->cgroup_v1_id = c->cgroup_v1_id;
  p->meta_ns = c->meta_ns;
  p->cpu_ns = c->cpu_ns;
  p->running_ns = running;
  p->wakeups = c->wakeups;
  p->migrations = c->migrations;
  p->read_bytes = c->read_bytes;
  p->write_bytes = c->write_bytes;
  p->cycles = c->cycles;
  p->instructions = c->instructions;
  p->llc_misses = c->llc_misses;
  for (int i = 0; i < ERG_BPF_NFREQ; i++)
    if (c->freq_khz[i]) {
      p->freq[p->nfreq].khz = c->freq_khz[i];
      p->freq[p->nfreq++].cpu_ns = c->freq_ns[i];
    }
  p->freq_other_ns = c->freq_other_ns;
  for (int i = 0; i < ERG_BPF_NCAP; i++) {
    p->cap_ns[i] = c->cap_ns[i];
    if (i < b->nclass)
      p->capacity_weighted_ns += c->cap_ns[i] * b->classes[i] / ERG_BPF_CAPACITY_SCALE;
  }
  p->exited = (c->flags & ERG_FLAG_EXITED) != 0;
  p->kthread = (c->flags & ERG_FLAG_KTHREAD) != 0;
}

/* Deletes the n exited groups at the front of keys: one syscall (5.6+)
 * instead of one per process, which was most of the agent's own CPU under
 * fork churn. Whatever the batch did not take is deleted one by one. */
static void drain_delete(struct erg_bpf *b, int fd, size_t n) {
  LIBBPF_OPTS(bpf_map_batch_opts, o);
  __u32 done = (__u32)n;

  if (n == 0)
    return;
  for (size_t i = 0; i < n; i++)
    pkeys_remove(b, &b->keys[i]);
  if (bpf_map_delete_batch(fd, b->keys, &done, &o) == 0) {
    b->procs_deleted += n;
    return;
  }
  if (done > n)
    done = 0;
  b->procs_deleted += done;
  for (size_t i = done; i < n; i++)
    if (bpf_map_delete_elem(fd, &b->keys[i]) == 0)
      b->procs_deleted++;
}

int erg_bpf_drain(struct erg_bpf *b, erg_bpf_drain_cb cb, void *user, char *why, size_t whylen) {
  int fd = b->fd.procs;
  struct erg_bpf_proc p;
  uint64_t now;
  long n;

  if (b->features & ERG_BPF_F_FREQ)
    erg_bpf_freq_refresh(b);
  if (cpu_snapshot(b, b->snap[0]) == 0)
    n = drain_read(b);
  else
    n = -1;
  if (n >= 0)
    n = drain_read_slots(b, (size_t)n);
  now = clock_mono_ns();
  b->drain_mono_ns = now;
  if (n < 0 || cpu_snapshot(b, b->snap[1])) {
    snprintf(why, whylen, "reading the BPF maps failed: %s", strerror(errno));
    return -1;
  }
  if (b->cut_cb)
    b->cut_cb(b->cut_user);
  sort_records(b, (size_t)n);
  n = (long)merge_records(b, (size_t)n);
  n = (long)running_only_add(b, (size_t)n);
  drain_settle(b, (size_t)n, now);
  size_t ndead = 0;
  for (long i = 0; i < n; i++) {
    proc_fill(b, &b->keys[i], &b->vals[i], b->running[i], &p);
    cb(&p, user);
    if (!p.exited)
      continue;
    b->exited++;
    /* Handed over: its slot is freed, and a procs key moves to the front
     * for the batch delete (the records before i are done with). */
    if (b->vals[i].flags & ERG_FLAG_IN_SLOT)
      slot_free(b, &b->keys[i]);
    if (b->vals[i].flags & ERG_FLAG_IN_HASH)
      b->keys[ndead++] = b->keys[i];
  }
  drain_delete(b, fd, ndead);
  b->drains++;
  return (int)n;
}
