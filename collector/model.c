// SPDX-License-Identifier: GPL-3.0-or-later
/* Node power models in ergd (docs/model.md, "Models in ergd"): each node's
 * model is MODEL_DIR/NODE.json (name sanitised), as `erg fit --out`
 * writes it. It is loaded when the node first appears and looked at again
 * every MODEL_CHECK_SECONDS; a file that fails to load is logged once and
 * the model in use stays. With refit_interval_seconds, a thread refits
 * from the node's journal and the loop installs the result unless
 * erg_model_is_worse says it is worse (the model in use scored on the
 * candidate's held-out cells). The thread touches only its own dataset and
 * the candidate slot (model and held-out cells), which the loop reads after
 * the thread said it is done (under the lock) and joined it. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector_int.h"
#include "erg_fit.h"
#include "state.h"

#define MODEL_CHECK_SECONDS 10
/* Slack over the meters' range for a prediction at every training
 * maximum at once (terms that never peak together). */
#define MODEL_CEILING_SLACK 2.0
/* Idle at most this times the highest measured power, plus a margin for
 * a journal of a few idle cells measured low. */
#define MODEL_MEASURED_SLACK 2.0
#define MODEL_MEASURED_MARGIN_WATTS 10.0
#define REFIT_TOLERANCE 0.05 /* as `erg fit`: 5 % more held-out MAE is "worse" */
#define JOURNAL_ROTATIONS 5

enum refit_state { REFIT_IDLE = 0, REFIT_RUNNING, REFIT_DONE };

struct node_model {
  char node[128], dir[600], path[1100], journal[1100];
  int idle_policy;
  struct erg_model model;
  int have;
  int feature_map[ERG_FIT_MAX_FEATURES];
  struct stat stamp; /* of the file last tried; st_ino 0: none */
  int missing_logged;
  double ceiling_watts;      /* the feeds' physical range; 0: none configured */
  double measured_max_watts; /* journal tail and cells of this run; NAN none */
  uint64_t refused;          /* model files and refits refused by model_bounds */
  int beyond_logged;         /* a cell beyond the model's training range was logged */
  int64_t last_check, next_refit;
  unsigned refit_interval;
  pthread_mutex_t lock;
  pthread_t thread;
  enum refit_state state; /* under lock */
  struct erg_model candidate;
  struct erg_holdout holdout; /* the candidate's held-out cells, to score the model in use */
  int candidate_rc;
  char candidate_why[256];
  atomic_int cancel; /* set by node_model_close: the fit stops at its next step */
};

/* GSL's error handler is process-wide (erg_fit switches it off for the
 * call), so at most one refit runs at a time across all nodes. */
static pthread_mutex_t refit_gate = PTHREAD_MUTEX_INITIALIZER;
static int refit_active;

static int stamp_equal(const struct stat *a, const struct stat *b) {
  return a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Model features the collector does not measure get x = 0 (said once). */
static void model_install(struct node_model *nm, const struct erg_model *m, const char *how) {
  char unknown[256] = "";
  nm->model = *m;
  nm->have = 1;
  nm->beyond_logged = 0;
  for (size_t k = 0; k < m->nfeatures; k++) {
    nm->feature_map[k] = erg_feature_index(m->feature[k]);
    /* Derived utilisation terms need the model's CPU count. */
    int d = erg_derived_index(m->feature[k]);
    if (d >= 0 && m->ncpu > 0)
      nm->feature_map[k] = ERG_NFEATURES + d;
    if (nm->feature_map[k] < 0 && strlen(unknown) + strlen(m->feature[k]) + 3 < sizeof unknown)
      strcat(strcat(unknown, " "), m->feature[k]);
  }
  erg_info("node %s: model loaded (%s): idle %.1f W, %zu feature(s), held-out MAE %.2f W, "
           "MAPE %.2f %%, idle policy %s%s%s",
           nm->node, how, m->idle_watts, m->nfeatures, m->metrics.mae_watts,
           m->metrics.mape_total_percent,
           erg_idle_policy_name((enum erg_idle_policy)nm->idle_policy),
           unknown[0] ? "; not measured here, counted as 0:" : "", unknown);
}

/* Within bounds (see the top of the file): 0, else -1 and why. */
static int model_bounds(const struct node_model *nm, const struct erg_model *m, char *why,
                        size_t whylen) {
  if (erg_model_check(m, why, whylen) != 0)
    return -1;
  double full = m->idle_watts;
  for (size_t k = 0; k < m->nfeatures; k++)
    full += m->coef[k] * m->feature_max[k];
  if (nm->ceiling_watts > 0 && m->idle_watts > nm->ceiling_watts) {
    snprintf(why, whylen, "idle power %g W is above the node's meters' range, %g W (max_watts)",
             m->idle_watts, nm->ceiling_watts);
    return -1;
  }
  if (nm->ceiling_watts > 0 && full > MODEL_CEILING_SLACK * nm->ceiling_watts) {
    snprintf(why, whylen,
             "the model predicts %g W at its training maxima, over %g x the node's meters' "
             "range, %g W (max_watts)",
             full, MODEL_CEILING_SLACK, nm->ceiling_watts);
    return -1;
  }
  double limit = MODEL_MEASURED_SLACK * nm->measured_max_watts + MODEL_MEASURED_MARGIN_WATTS;
  if (isfinite(nm->measured_max_watts) && m->idle_watts > limit) {
    snprintf(why, whylen,
             "idle power %g W is above %g W, %g x the highest power measured on the node "
             "(%g W)",
             m->idle_watts, limit, MODEL_MEASURED_SLACK, nm->measured_max_watts);
    return -1;
  }
  return 0;
}

void node_model_note_measured(struct node_model *nm, double watts) {
  if (nm && isfinite(watts) && watts >= 0 && !(watts <= nm->measured_max_watts))
    nm->measured_max_watts = watts;
}

uint64_t node_model_refused(const struct node_model *nm) { return nm ? nm->refused : 0; }

const char *node_model_dir(const struct node_model *nm) { return nm ? nm->dir : ""; }

/* A model is for this node when it names it (raw or sanitised) or none. */
static int model_for_node(const struct erg_model *m, const char *node) {
  char safe[ERG_NAME_MAX];
  erg_name_sanitize(node, strlen(node), safe);
  return !m->node[0] || !strcmp(m->node, node) || !strcmp(m->node, safe);
}

static void model_check_file(struct node_model *nm) {
  struct stat st;
  if (stat(nm->path, &st) != 0) {
    if (nm->have && !nm->missing_logged)
      erg_warn("node %s: model file %s is gone; keeping the model in use", nm->node, nm->path);
    nm->missing_logged = 1;
    return;
  }
  nm->missing_logged = 0;
  if (stamp_equal(&st, &nm->stamp))
    return;
  nm->stamp = st; /* tried once per version of the file */
  struct erg_model m;
  char why[300];
  if (erg_model_load(&m, nm->path, why, sizeof why) != 0) {
    erg_warn("node %s: model %s not loaded: %s%s", nm->node, nm->path, why,
             nm->have ? "; keeping the model in use" : "");
    return;
  }
  if (!model_for_node(&m, nm->node)) {
    erg_warn("node %s: model %s is for node '%s'; not loaded", nm->node, nm->path, m.node);
    return;
  }
  if (model_bounds(nm, &m, why, sizeof why) != 0) {
    nm->refused++;
    erg_warn("node %s: model %s not loaded: %s%s", nm->node, nm->path, why,
             nm->have ? "; keeping the model in use" : "");
    return;
  }
  model_install(nm, &m, nm->path);
}

struct node_model *node_model_open(const struct erg_collector_config *cfg, const char *node,
                                   const char *journal_dir) {
  struct node_model *nm = calloc(1, sizeof *nm);
  if (!nm)
    return NULL;
  char safe[ERG_NAME_MAX];
  erg_name_sanitize(node, strlen(node), safe);
  if (cfg->model_dir[0])
    erg_strlcpy(nm->dir, cfg->model_dir, sizeof nm->dir);
  else
    snprintf(nm->dir, sizeof nm->dir, "%s/models", cfg->data_dir);
  snprintf(nm->path, sizeof nm->path, "%s/%s.json", nm->dir, safe);
  erg_journal_path(journal_dir, node, nm->journal, sizeof nm->journal);
  erg_strlcpy(nm->node, node, sizeof nm->node);
  nm->idle_policy = cfg->idle_policy;
  nm->refit_interval = cfg->refit_interval_seconds;
  /* A shared meter's members are fitted together (erg fit --group): their
   * journals hold the whole meter, no single node's power. */
  for (int g = 0; g < cfg->ngroups; g++)
    for (int m = 0; m < cfg->groups[g].nmembers; m++)
      if (!strcmp(cfg->nodes[cfg->groups[g].members[m]].name, node))
        nm->refit_interval = 0;
  /* A meter reads at most max_watts per feed (meter_check.c). */
  for (int i = 0; i < cfg->nnodes; i++)
    for (int f = 0; !strcmp(cfg->nodes[i].name, node) && f < cfg->nodes[i].nfeeds; f++) {
      const struct erg_node_feed *fd = &cfg->nodes[i].feeds[f];
      if (fd->factor > 0)
        nm->ceiling_watts += fd->factor * meter_max_watts(&cfg->sources[fd->source], fd->channel);
    }
  nm->measured_max_watts = erg_journal_measured_max(journal_dir, node);
  erg_holdout_init(&nm->holdout);
  pthread_mutex_init(&nm->lock, NULL);
  model_check_file(nm);
  return nm;
}

/* ---- scheduled refit ---- */

/* Checked every 256 KiB of journal: shutdown need not wait for a file. */
static int refit_read_cancelled(void *user, size_t bytes_read) {
  (void)bytes_read;
  return atomic_load(&((struct node_model *)user)->cancel);
}

static int refit_read(struct node_model *nm, struct erg_dataset *ds, char *why, size_t whylen) {
  if (erg_journal_read_progress(ds, nm->journal, refit_read_cancelled, nm, why, whylen) != 0)
    return -1;
  for (int i = 1; i <= JOURNAL_ROTATIONS; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s.%d", nm->journal, i);
    if (atomic_load(&nm->cancel)) {
      snprintf(why, whylen, "cancelled");
      return -1;
    }
    if (access(path, R_OK) == 0 &&
        erg_journal_read_progress(ds, path, refit_read_cancelled, nm, why, whylen) != 0)
      return -1;
  }
  return erg_dataset_derive(ds, 0, why, whylen) < 0 ? -1 : 0;
}

/* The node's recorded idle profile (`erg fit --idle`), as `erg fit` uses
 * it: MODEL_DIR/idle/NODE.json when it exists. */
static int refit_idle_profile(struct node_model *nm, struct erg_idle_profile *p, char *why,
                              size_t whylen) {
  char path[1200];
  if (erg_idle_profile_path(nm->dir, nm->node, path, sizeof path) != 0 || access(path, F_OK) != 0)
    return 0;
  return erg_idle_profile_load(p, path, why, whylen) == 0 ? 1 : -1;
}

static void *refit_main(void *arg) {
  struct node_model *nm = arg;
  struct erg_dataset ds;
  struct erg_fit_options o;
  struct erg_model m;
  char why[256] = "";
  erg_dataset_init(&ds);
  erg_fit_options_init(&o);
  struct erg_idle_profile profile;
  o.cancel = &nm->cancel;
  o.holdout = &nm->holdout;
  int rc = refit_read(nm, &ds, why, sizeof why), have = 0;
  if (rc == 0 && (have = refit_idle_profile(nm, &profile, why, sizeof why)) < 0)
    rc = -1;
  o.idle_profile = have > 0 ? &profile : NULL;
  if (rc == 0) {
    erg_fit_lock(); /* beside the tails' window choices (tailwin.c) */
    rc = erg_fit(&ds, &o, &m, why, sizeof why);
    erg_fit_unlock();
  }
  erg_dataset_free(&ds);
  pthread_mutex_lock(&nm->lock);
  if (rc == 0)
    nm->candidate = m;
  nm->candidate_rc = rc;
  erg_strlcpy(nm->candidate_why, why, sizeof nm->candidate_why);
  nm->state = REFIT_DONE;
  pthread_mutex_unlock(&nm->lock);
  return NULL;
}

/* Installs the finished candidate unless the model in use predicts the
 * candidate's held-out cells better, and saves it so a restart keeps it
 * (the saved file's stamp is taken, not reloaded). */
static void refit_handover(struct node_model *nm) {
  pthread_join(nm->thread, NULL);
  pthread_mutex_lock(&refit_gate);
  refit_active = 0;
  pthread_mutex_unlock(&refit_gate);
  nm->state = REFIT_IDLE;
  if (nm->candidate_rc != 0) {
    erg_warn("node %s: refit failed: %s", nm->node, nm->candidate_why);
    erg_holdout_free(&nm->holdout);
    return;
  }
  char why[400];
  if (model_bounds(nm, &nm->candidate, why, sizeof why) != 0) {
    nm->refused++;
    erg_warn("node %s: refit model not installed: %s", nm->node, why);
    erg_holdout_free(&nm->holdout);
    return;
  }
  bool worse = erg_model_is_worse(nm->have ? &nm->model : NULL, &nm->candidate, &nm->holdout,
                                  REFIT_TOLERANCE, why, sizeof why);
  erg_holdout_free(&nm->holdout); /* up to a quarter of the journal: not kept */
  if (worse) {
    erg_info("node %s: refit model not installed: %s", nm->node, why);
    return;
  }
  model_install(nm, &nm->candidate, "refit");
  erg_info("node %s: refit: %s", nm->node, why);
  char swhy[300];
  struct stat st;
  erg_mkdir_p(nm->dir, 0755);
  if (erg_model_save(&nm->model, nm->path, swhy, sizeof swhy) != 0)
    erg_warn("node %s: refit model not saved: %s", nm->node, swhy);
  else if (stat(nm->path, &st) == 0)
    nm->stamp = st;
}

static void refit_maybe_start(struct node_model *nm, int64_t now) {
  if (!nm->next_refit)
    nm->next_refit = now + nm->refit_interval;
  if (now < nm->next_refit)
    return;
  pthread_mutex_lock(&refit_gate);
  int busy = refit_active;
  refit_active = 1;
  pthread_mutex_unlock(&refit_gate);
  if (busy)
    return; /* another node's refit runs; try again next tick */
  nm->next_refit = now + nm->refit_interval;
  nm->state = REFIT_RUNNING;
  erg_info("node %s: refit started (%s)", nm->node, nm->journal);
  if (pthread_create(&nm->thread, NULL, refit_main, nm) != 0) {
    erg_warn("node %s: cannot start the refit thread", nm->node);
    nm->state = REFIT_IDLE;
    pthread_mutex_lock(&refit_gate);
    refit_active = 0;
    pthread_mutex_unlock(&refit_gate);
  }
}

void node_model_tick(struct node_model *nm, int64_t now) {
  if (!nm)
    return;
  if (now - nm->last_check >= MODEL_CHECK_SECONDS) {
    nm->last_check = now;
    model_check_file(nm);
  }
  if (!nm->refit_interval)
    return;
  pthread_mutex_lock(&nm->lock);
  enum refit_state s = nm->state;
  pthread_mutex_unlock(&nm->lock);
  if (s == REFIT_DONE)
    refit_handover(nm);
  else if (s == REFIT_IDLE)
    refit_maybe_start(nm, now);
}

/* The idle policy holds without a model too (CPU-share attribution). */
struct erg_cell_model node_model_cell(const struct node_model *nm) {
  struct erg_cell_model cm = {0};
  if (nm)
    cm.idle_policy = nm->idle_policy;
  if (nm && nm->have) {
    cm.model = &nm->model;
    cm.feature_map = nm->feature_map;
  }
  return cm;
}

int node_model_first_beyond(struct node_model *nm) {
  if (!nm || nm->beyond_logged)
    return 0;
  nm->beyond_logged = 1;
  return 1;
}

void node_model_close(struct node_model *nm) {
  if (!nm)
    return;
  pthread_mutex_lock(&nm->lock);
  enum refit_state s = nm->state;
  pthread_mutex_unlock(&nm->lock);
  if (s != REFIT_IDLE) {
    /* A fit of a large journal takes seconds; shutdown should not wait. */
    atomic_store(&nm->cancel, 1);
    pthread_join(nm->thread, NULL);
    pthread_mutex_lock(&refit_gate);
    refit_active = 0;
    pthread_mutex_unlock(&refit_gate);
  }
  erg_holdout_free(&nm->holdout);
  pthread_mutex_destroy(&nm->lock);
  free(nm);
}
