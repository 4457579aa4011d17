// SPDX-License-Identifier: GPL-3.0-or-later
/* The store writer: one thread that performs every archive update and
 * creation, in the order the loop queued them. Creating a node's archives
 * costs milliseconds of disk writes (6.5 MB for node.rrd); on the loop
 * thread, 2,000 new nodes stalled ingest for most of a minute and their
 * samples arrived after the cells had closed. One FIFO keeps per-file
 * time order, which RRD requires. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "erg_store.h"

struct writer_op {
  struct writer_op *next;
  int64_t t_end;
  double watts;
  /* nds > 0: erg_store_key_update_ds(ds, vals) instead of watts; ds static */
  const char *const *ds;
  double vals[WRITER_MAX_DS];
  int nds;
  struct erg_store_node_cell cell;
  const char *node, *kind, *key; /* kind NULL: a node cell; node NULL: cluster-wide */
  int expire;                    /* erg_store_expire(t_end, idle[0], idle[1]) instead */
  int remove;                    /* erg_store_key_remove(node, kind, key) instead */
  int names;                     /* 1: erg_store_names_write(node, kind, key = the text);
                                    2: erg_store_job_users_write(node, key = the text);
                                    3: erg_store_job_commands_write(node, key = the text) */
  int64_t idle[2];
  char buf[];
};

struct writer {
  struct erg_store *store;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct writer_op *head, *tail;   /* queued for the thread (locked) */
  struct writer_op *bhead, *btail; /* the loop's batch, not yet committed */
  size_t bcount, max_pending;
  int stopping;
  atomic_size_t pending;
  uint64_t committed;        /* ops handed to the thread, ever (the loop's) */
  atomic_uint_fast64_t done; /* ops the thread has carried out, ever */
  atomic_uint_fast64_t errors, dropped;
  struct store_spell spell; /* the writer thread's */
};

int store_spell_note(struct store_spell *sp, const char *why, int64_t now_s) {
  if (why) {
    sp->last_s = now_s;
    sp->spell_errors++;
    if (sp->failing)
      return 0;
    *sp =
        (struct store_spell){.failing = true, .first_s = now_s, .last_s = now_s, .spell_errors = 1};
    erg_warn("store: %s (further store errors only counted until writes succeed again: "
             "erg_store_errors_total)",
             why);
    return 1;
  }
  if (!sp->failing || now_s - sp->last_s < STORE_RECOVERED_SECONDS)
    return 0;
  sp->failing = false;
  erg_info("store: writes succeed again, none failed for %d s (%llu failed in %lld s)",
           STORE_RECOVERED_SECONDS, (unsigned long long)sp->spell_errors,
           (long long)(sp->last_s - sp->first_s));
  return 2;
}

/* One write's outcome: counted, and said as store_spell_note says. */
static void writer_note(struct writer *w, int rc, const char *why) {
  if (rc != 0)
    atomic_fetch_add(&w->errors, 1);
  store_spell_note(&w->spell, rc ? why : NULL, (int64_t)(erg_time_monotonic_ns() / ERG_NS_PER_S));
}

static void writer_run_op(struct writer *w, const struct writer_op *op) {
  char why[300];
  if (op->expire) {
    if (erg_store_expire(w->store, op->t_end, op->idle[0], op->idle[1], NULL, why, sizeof why))
      erg_warn("store expiry: %s", why);
    return;
  }
  if (op->names) {
    writer_note(w,
                op->names == 3
                    ? erg_store_job_commands_write(w->store, op->node, op->key, why, sizeof why)
                : op->names == 2
                    ? erg_store_job_users_write(w->store, op->node, op->key, why, sizeof why)
                    : erg_store_names_write(w->store, op->node, op->kind, op->key, why, sizeof why),
                why);
    return;
  }
  if (op->remove) {
    if (erg_store_key_remove(w->store, op->node, op->kind, op->key, why, sizeof why))
      erg_warn("store: removing an evicted key: %s", why);
    return;
  }
  int rc = !op->kind ? erg_store_node_update(w->store, op->node, &op->cell, why, sizeof why)
           : op->nds ? erg_store_key_update_ds(w->store, op->node, op->kind, op->key, op->t_end,
                                               op->ds, op->vals, op->nds, why, sizeof why)
                     : erg_store_key_update(w->store, op->node, op->kind, op->key, op->t_end,
                                            op->watts, why, sizeof why);
  writer_note(w, rc, why);
}

static void *writer_main(void *arg) {
  struct writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->head && !w->stopping)
      pthread_cond_wait(&w->wake, &w->lock);
    struct writer_op *op = w->head;
    if (!op)
      break; /* stopping and drained */
    w->head = w->tail = NULL;
    pthread_mutex_unlock(&w->lock);
    while (op) {
      struct writer_op *next = op->next;
      writer_run_op(w, op);
      free(op);
      atomic_fetch_sub(&w->pending, 1);
      atomic_fetch_add(&w->done, 1);
      op = next;
    }
    pthread_mutex_lock(&w->lock);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

struct writer *writer_start(struct erg_store *store, size_t max_pending) {
  struct writer *w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  w->store = store;
  w->max_pending = max_pending;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->wake, NULL);
  if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
    free(w);
    return NULL;
  }
  return w;
}

static struct writer_op *writer_op_new(struct writer *w, const char *node, const char *kind,
                                       const char *key) {
  /* Beyond the bound the disk cannot keep up at all: drop, count, and
   * let the archive show a gap rather than grow without limit. */
  if (atomic_load(&w->pending) + w->bcount >= w->max_pending) {
    atomic_fetch_add(&w->dropped, 1);
    return NULL;
  }
  size_t ln = node ? strlen(node) + 1 : 0, lk = kind ? strlen(kind) + 1 : 0;
  size_t ly = key ? strlen(key) + 1 : 0;
  struct writer_op *op = calloc(1, sizeof *op + ln + lk + ly);
  if (!op) {
    atomic_fetch_add(&w->dropped, 1);
    return NULL;
  }
  char *p = op->buf;
  op->node = node ? memcpy(p, node, ln) : NULL;
  op->kind = kind ? memcpy(p + ln, kind, lk) : NULL;
  op->key = key ? memcpy(p + ln + lk, key, ly) : NULL;
  if (w->btail)
    w->btail->next = op;
  else
    w->bhead = op;
  w->btail = op;
  w->bcount++;
  return op;
}

void writer_node(struct writer *w, const char *node, const struct erg_store_node_cell *cell) {
  struct writer_op *op = writer_op_new(w, node, NULL, NULL);
  if (op)
    op->cell = *cell;
}

void writer_key(struct writer *w, const char *node, const char *kind, const char *key,
                int64_t t_end, double watts) {
  struct writer_op *op = writer_op_new(w, node, kind, key);
  if (op) {
    op->t_end = t_end;
    op->watts = watts;
  }
}

void writer_key_ds(struct writer *w, const char *node, const char *kind, const char *key,
                   int64_t t_end, const char *const *ds, const double *vals, int nds) {
  if (nds < 1 || nds > WRITER_MAX_DS)
    return;
  struct writer_op *op = writer_op_new(w, node, kind, key);
  if (op) {
    op->t_end = t_end;
    op->ds = ds;
    op->nds = nds;
    memcpy(op->vals, vals, (size_t)nds * sizeof *vals);
  }
}

/* Expiry deletes archives and rewrites index.tsv: in this thread, between
 * updates, never beside one. */
void writer_expire(struct writer *w, int64_t now, int64_t key_idle_seconds,
                   int64_t cluster_idle_seconds) {
  struct writer_op *op = writer_op_new(w, NULL, NULL, NULL);
  if (op) {
    op->expire = 1;
    op->t_end = now;
    op->idle[0] = key_idle_seconds;
    op->idle[1] = cluster_idle_seconds;
  }
}

/* Queued behind the key's pending updates, so none recreates the file. */
void writer_remove_key(struct writer *w, const char *node, const char *kind, const char *key) {
  struct writer_op *op = writer_op_new(w, node, kind, key);
  if (op)
    op->remove = 1;
}

void writer_names(struct writer *w, const char *node, const char *kind, const char *tsv) {
  struct writer_op *op = writer_op_new(w, node, kind, tsv);
  if (op)
    op->names = 1;
}

void writer_job_users(struct writer *w, const char *node, const char *tsv) {
  struct writer_op *op = writer_op_new(w, node, "job", tsv);
  if (op)
    op->names = 2;
}

void writer_job_commands(struct writer *w, const char *node, const char *tsv) {
  struct writer_op *op = writer_op_new(w, node, "job", tsv);
  if (op)
    op->names = 3;
}

void writer_commit(struct writer *w) {
  if (!w->bhead)
    return;
  pthread_mutex_lock(&w->lock);
  if (w->tail)
    w->tail->next = w->bhead;
  else
    w->head = w->bhead;
  w->tail = w->btail;
  atomic_fetch_add(&w->pending, w->bcount);
  w->committed += w->bcount;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  w->bhead = w->btail = NULL;
  w->bcount = 0;
}

size_t writer_pending(struct writer *w) { return atomic_load(&w->pending); }
uint64_t writer_committed(const struct writer *w) { return w->committed; }
int writer_done_through(struct writer *w, uint64_t mark) { return atomic_load(&w->done) >= mark; }
uint64_t writer_errors(struct writer *w) { return atomic_load(&w->errors); }
uint64_t writer_dropped(struct writer *w) { return atomic_load(&w->dropped); }

void writer_stop(struct writer *w) {
  if (!w)
    return;
  writer_commit(w);
  size_t left = writer_pending(w);
  if (left > 1000)
    erg_info("store: writing %zu queued updates before exit", left);
  pthread_mutex_lock(&w->lock);
  w->stopping = 1;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->wake);
  free(w);
}
