// SPDX-License-Identifier: GPL-3.0-or-later
/* A node's stored state, read off the loop thread. A node met for the
 * first time since the start resumes from what the last run stored: its
 * archive's last update (librrd), the journal's tail and header, names.tsv,
 * its model file and known key archives. That is a few milliseconds of
 * disk reads per node on a cold cache; on the loop, 5,000 agents saying
 * hello after a restart would stall ingest for over a minute. Here
 * threads read it while the loop keeps taking messages, and the loop
 * installs each result when it is done (nodes.c, node_install). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "erg_store.h"

#define NODE_LOADER_THREADS 2 /* reads overlap on the disk's queue */

struct node_load {
  struct node_load *next;
  void *tag;
  char node[128];
  struct node_stored st;
};

struct node_loader {
  const struct erg_collector_config *cfg;
  const struct erg_store *store;
  const char *journal_dir;
  pthread_t threads[NODE_LOADER_THREADS];
  int nthreads;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct node_load *todo, *todo_tail, *done; /* under lock */
  int stopping;
  atomic_int ndone; /* results in done, readable without the lock */
};

/* The last run's meter lag (JOURNAL_DIR/NODE.lag). */
static void node_lag_read(const struct erg_collector_config *cfg, const char *journal_dir,
                          const char *node, struct node_stored *st) {
  char path[1100];
  if (!cfg->lag_max_seconds || erg_lag_file_path(journal_dir, node, path, sizeof path) != 0)
    return;
  st->lag_rc = erg_lag_file_read(path, &st->lag, st->lag_why, sizeof st->lag_why);
}

/* The last run's choice of the curve's tails' window (JOURNAL_DIR/NODE.tailwin). */
static void node_tailwin_read(const char *journal_dir, const char *node, struct node_stored *st) {
  char path[1100];
  if (erg_tailwin_file_path(journal_dir, node, path, sizeof path) == 0)
    st->tailwin_rc =
        erg_tailwin_file_read(path, &st->tailwin, st->tailwin_why, sizeof st->tailwin_why);
}

void node_stored_read(const struct erg_collector_config *cfg, const struct erg_store *store,
                      const char *journal_dir, const char *node, int64_t now,
                      struct node_stored *st) {
  memset(st, 0, sizeof *st);
  /* Resume after the last stored cell: RRD would refuse older updates.
   * Or after the last journal row, when later: rows are written at once,
   * store updates by the writer thread, so after a SIGKILL the store may
   * lack cells the journal has, and finalising them again would journal
   * them twice. */
  int64_t last = erg_store_node_last(store, node);
  int64_t journalled = erg_journal_last_end_by(journal_dir, node, now + ERG_JOURNAL_FUTURE_SECONDS,
                                               &st->journal_future_s);
  st->resume_s = journalled > last ? journalled : last;
  st->journal_columns = erg_journal_columns(journal_dir, node);
  /* Names from before a restart, so an older agent's uids keep theirs. */
  char dir[1100];
  if (erg_store_kind_dir(store, node, "user", dir, sizeof dir - 12) == 0) {
    strcat(dir, "/names.tsv");
    user_names_load(&st->names, dir);
  }
  /* Whose its jobs were, so a rewrite after a restart keeps them. */
  if (erg_store_kind_dir(store, node, "job", dir, sizeof dir - 12) == 0) {
    strcat(dir, "/users.tsv");
    job_users_load(&st->job_users, dir);
  }
  /* Keys written before (archives updated within key_expire_seconds). */
  for (int k = 0; k < PROFILE_NKINDS; k++)
    if (erg_store_kind_dir(store, node, profile_kind_names[k], dir, sizeof dir) == 0)
      profile_known_load(&st->known[k], dir, now, cfg->key_expire_seconds);
  st->model = node_model_open(cfg, node, journal_dir);
  node_lag_read(cfg, journal_dir, node, st);
  node_tailwin_read(journal_dir, node, st);
}

void node_stored_free(struct node_stored *st) {
  user_names_free(&st->names);
  job_users_free(st->job_users);
  for (int k = 0; k < PROFILE_NKINDS; k++)
    profile_known_free(&st->known[k]);
  node_model_close(st->model);
  memset(st, 0, sizeof *st);
}

static void *node_loader_main(void *arg) {
  struct node_loader *l = arg;
  pthread_mutex_lock(&l->lock);
  for (;;) {
    while (!l->todo && !l->stopping)
      pthread_cond_wait(&l->wake, &l->lock);
    struct node_load *job = l->todo;
    if (!job)
      break; /* stopping */
    l->todo = job->next;
    if (!l->todo)
      l->todo_tail = NULL;
    pthread_mutex_unlock(&l->lock);
    int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
    node_stored_read(l->cfg, l->store, l->journal_dir, job->node, now, &job->st);
    pthread_mutex_lock(&l->lock);
    job->next = l->done;
    l->done = job;
    atomic_fetch_add(&l->ndone, 1);
  }
  pthread_mutex_unlock(&l->lock);
  return NULL;
}

struct node_loader *node_loader_start(const struct erg_collector_config *cfg,
                                      const struct erg_store *store, const char *journal_dir) {
  struct node_loader *l = calloc(1, sizeof *l);
  if (!l)
    return NULL;
  *l = (struct node_loader){.cfg = cfg, .store = store, .journal_dir = journal_dir};
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->wake, NULL);
  while (l->nthreads < NODE_LOADER_THREADS &&
         pthread_create(&l->threads[l->nthreads], NULL, node_loader_main, l) == 0)
    l->nthreads++;
  if (l->nthreads == 0) {
    node_loader_stop(l);
    return NULL;
  }
  return l;
}

int node_loader_submit(struct node_loader *l, const char *node, void *tag) {
  struct node_load *job = calloc(1, sizeof *job);
  if (!job)
    return -1;
  job->tag = tag;
  erg_strlcpy(job->node, node, sizeof job->node);
  pthread_mutex_lock(&l->lock);
  if (l->todo_tail)
    l->todo_tail->next = job;
  else
    l->todo = job;
  l->todo_tail = job;
  pthread_cond_signal(&l->wake);
  pthread_mutex_unlock(&l->lock);
  return 0;
}

size_t node_loader_collect(struct node_loader *l, node_loaded_fn fn, void *user) {
  if (!atomic_load(&l->ndone))
    return 0; /* called often from the loop: no lock when nothing is done */
  pthread_mutex_lock(&l->lock);
  atomic_store(&l->ndone, 0);
  struct node_load *done = l->done;
  l->done = NULL;
  pthread_mutex_unlock(&l->lock);
  size_t n = 0;
  for (struct node_load *next; done; done = next, n++) {
    next = done->next;
    fn(user, done->tag, &done->st); /* takes what it keeps of st */
    node_stored_free(&done->st);
    free(done);
  }
  return n;
}

static void node_load_list_free(struct node_load *job) {
  for (struct node_load *next; job; job = next) {
    next = job->next;
    node_stored_free(&job->st);
    free(job);
  }
}

void node_loader_stop(struct node_loader *l) {
  if (!l)
    return;
  pthread_mutex_lock(&l->lock);
  l->stopping = 1;
  node_load_list_free(l->todo); /* never started: nothing to install */
  l->todo = l->todo_tail = NULL;
  pthread_cond_broadcast(&l->wake);
  pthread_mutex_unlock(&l->lock);
  for (int i = 0; i < l->nthreads; i++)
    pthread_join(l->threads[i], NULL);
  node_load_list_free(l->done);
  pthread_mutex_destroy(&l->lock);
  pthread_cond_destroy(&l->wake);
  free(l);
}
