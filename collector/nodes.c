// SPDX-License-Identifier: GPL-3.0-or-later
/* A node's life in ergd's loop: looked up by name on every input, its
 * stored state read by the loader threads (nodeload.c) and installed here;
 * its samples wait meanwhile (ingest.c). Its meter lag estimate outlives
 * the process (JOURNAL_DIR/NODE.lag): without it, a restarted ergd aligned
 * meter data unshifted, and flagged the cells for the fit, until a fresh
 * window of data gave the lag again. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_store.h"
#include "state.h"

static uint64_t node_hash(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return h;
}

/* The slot of the node called name, or the free slot where it would go:
 * every sample looks its node up, so by hash, not by scanning all nodes.
 * The table has more than twice ERG_MAX_NODES slots; nodes are never
 * removed, so probing always ends. */
static struct node_state **node_slot(struct collector *c, const char *name) {
  size_t mask = c->node_index_len - 1, j = node_hash(name) & mask;
  while (c->node_index[j] && strcmp(c->node_index[j]->name, name))
    j = (j + 1) & mask;
  return &c->node_index[j];
}

struct node_state *collector_node(struct collector *c, const char *name, int create) {
  struct node_state **slot = node_slot(c, name);
  if (*slot)
    return *slot;
  if (!create || c->nnodes >= ERG_MAX_NODES || strlen(name) >= sizeof c->nodes[0]->name)
    return NULL;
  struct node_state **arr = realloc(c->nodes, (c->nnodes + 1) * sizeof *arr);
  struct node_state *n = calloc(1, sizeof *n);
  if (arr)
    c->nodes = arr;
  if (!arr || !n) {
    free(n);
    return NULL;
  }
  erg_strlcpy(n->name, name, sizeof n->name);
  n->idle_watts = c->cfg->idle_watts;
  n->group = -1; /* groups_build makes members of configured ones */
  n->share = NAN;
  erg_lag_init(&n->lag);
  erg_grid_init(&n->grid, c->cfg->step_seconds);
  /* A node without a [node.NAME] section has no feeds: no measured power. */
  int nfeeds = 0;
  n->cfg_index = -1;
  for (int i = 0; i < c->cfg->nnodes; i++)
    if (!strcmp(c->cfg->nodes[i].name, name)) {
      n->cfg_index = i;
      nfeeds = c->cfg->nodes[i].nfeeds;
      if (!isnan(c->cfg->nodes[i].idle_watts))
        n->idle_watts = c->cfg->nodes[i].idle_watts;
    }
  erg_grid_set_feeds(&n->grid, nfeeds);
  erg_lag_set_feeds(&n->lag, nfeeds);
  /* A meter that shows a trailing mean (average_seconds): the longest of
   * the node's feeds', in whole seconds. */
  for (int f = 0; n->cfg_index >= 0 && f < nfeeds; f++) {
    int src = c->cfg->nodes[n->cfg_index].feeds[f].source;
    long a = src >= 0 && src < c->cfg->nsources ? lround(c->cfg->sources[src].average_seconds) : 0;
    if (a > n->lag.average_seconds)
      n->lag.average_seconds = (int)a;
  }
  n->last_measured_watts = NAN;
  n->last_modelled_watts = NAN;
  n->lag_seconds = n->lag_correlation = n->lag_confidence = n->lag_shift_seconds = NAN;
  n->tail_window_seconds = n->meter_update_seconds = NAN;
  c->nodes[c->nnodes++] = n;
  *slot = n;
  /* In the loop, the stored state is read by the loader threads: the
   * loop never waits for the disk (nodeload.c). Before it, at start. */
  if (c->loader && node_loader_submit(c->loader, name, n) == 0)
    return n;
  struct node_stored st;
  node_stored_read(c->cfg, c->store, c->journal_dir, name,
                   (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S), &st);
  node_install(c, n, &st);
  node_stored_free(&st);
  return n;
}

/* ---- nodes without a [node.NAME] section ----
 * Agents of such nodes are accepted (their cells have no measured power),
 * but each new name costs its archives, ~6 MB at the default retention:
 * made-up names would fill the disk. At most max_unconfigured_nodes of
 * them have archives; a name that has them from an earlier run costs
 * nothing new and is always taken, so the bound holds across restarts and
 * an upgrade keeps every node it had. */

static int name_cmp(const void *a, const void *b) { return strcmp(a, b); }

void nodes_scan_stored(struct collector *c) {
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/nodes", erg_store_root(c->store));
  DIR *d = opendir(dir);
  if (!d)
    return; /* a first start: none */
  /* The configured nodes' directory names, to tell them apart. */
  size_t ncfg = (size_t)c->cfg->nnodes, cap = 0;
  char(*cfg)[ERG_NAME_MAX] = calloc(ncfg ? ncfg : 1, ERG_NAME_MAX);
  if (!cfg) {
    closedir(d);
    return;
  }
  for (size_t i = 0; i < ncfg; i++)
    erg_name_sanitize(c->cfg->nodes[i].name, strlen(c->cfg->nodes[i].name), cfg[i]);
  qsort(cfg, ncfg, ERG_NAME_MAX, name_cmp);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) || !erg_name_is_safe(de->d_name) ||
        bsearch(de->d_name, cfg, ncfg, ERG_NAME_MAX, name_cmp))
      continue;
    c->unconfigured++;
    if (c->nstored == cap) {
      /* Beyond the node table's size only counted: such names are new. */
      size_t want = cap ? cap * 2 : 64;
      char(*grown)[ERG_NAME_MAX] =
          want <= ERG_MAX_NODES ? realloc(c->stored_names, want * ERG_NAME_MAX) : NULL;
      if (!grown)
        continue;
      c->stored_names = grown;
      cap = want;
    }
    erg_strlcpy(c->stored_names[c->nstored++], de->d_name, ERG_NAME_MAX);
  }
  closedir(d);
  free(cfg);
  if (c->nstored)
    qsort(c->stored_names, c->nstored, ERG_NAME_MAX, name_cmp);
  if (c->unconfigured > c->cfg->max_unconfigured_nodes)
    erg_warn("%u nodes without a [node.NAME] section have archives in %s, more than "
             "max_unconfigured_nodes (%u): they are still taken, new ones are refused",
             c->unconfigured, dir, c->cfg->max_unconfigured_nodes);
}

/* Whether an unconfigured node may have state and archives: 1 it has
 * them already, 2 a new one (counted), 0 no. */
static int node_admit(struct collector *c, const char *name) {
  char san[ERG_NAME_MAX];
  erg_name_sanitize(name, strlen(name), san);
  if (c->nstored && bsearch(san, c->stored_names, c->nstored, ERG_NAME_MAX, name_cmp))
    return 1;
  if (c->unconfigured >= c->cfg->max_unconfigured_nodes)
    return 0;
  c->unconfigured++;
  return 2;
}

struct node_state *node_for_message(struct collector *c, const char *name) {
  struct node_state *n = collector_node(c, name, 0);
  if (n)
    return n;
  /* Every configured node was created at the start: this one has no
   * section. Refused names leave no state behind. */
  int admitted = node_admit(c, name);
  if (!admitted) {
    ingest_refuse(c, NULL, name, INGEST_UNKNOWN_NODE_CAP, "");
    return NULL;
  }
  if ((n = collector_node(c, name, 1)))
    return n;
  c->unconfigured -= admitted == 2;
  char why[120];
  snprintf(why, sizeof why,
           "node limit (%d) reached, a name of %zu bytes (at most %zu), or "
           "out of memory",
           ERG_MAX_NODES, strlen(name), sizeof n->name - 1);
  ingest_refuse(c, NULL, name, INGEST_NODE_LIMIT, why);
  return NULL;
}

/* ---- refused agent messages ----
 * The loop's side of ingest_check.c: what a refusal costs the operator is
 * one log line per node and reason, and a counter,
 * erg_agent_messages_total{result="rejected",reason=...}. */

void ingest_refuse(struct collector *c, struct node_state *n, const char *node,
                   enum ingest_reason r, const char *why) {
  if (r <= INGEST_OK || r >= INGEST_NREASONS)
    return;
  c->msgs_rejected[r]++;
  const char *rn = ingest_reason_names[r];
  if (r == INGEST_UNKNOWN_NODE_CAP) {
    /* Names may be made up by the thousand: no state per name, and the
     * log hears of them once a minute at most. */
    int64_t now = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S);
    c->unknown_refused_unsaid++;
    if (c->unknown_said_s && now - c->unknown_said_s < 60)
      return;
    erg_warn("node '%.64s' has no [node.NAME] section, and %u such nodes have archives already "
             "(max_unconfigured_nodes = %u): its messages are refused; %llu messages of new "
             "unconfigured nodes refused since this was last said (at most once a minute; "
             "erg_agent_messages_total{result=\"rejected\",reason=\"%s\"})",
             node ? node : "", c->unconfigured, c->cfg->max_unconfigured_nodes,
             (unsigned long long)c->unknown_refused_unsaid, rn);
    c->unknown_said_s = now;
    c->unknown_refused_unsaid = 0;
    return;
  }
  if (n) {
    if (n->ingest.logged & 1u << r)
      return;
    n->ingest.logged |= 1u << r;
    erg_warn("node %s: agent message refused: %s (further ones of this node with reason %s "
             "only counted: erg_agent_messages_total{result=\"rejected\",reason=\"%s\"})",
             n->name, why, rn, rn);
    return;
  }
  /* No node to say it once for: once overall per reason. */
  if (c->msgs_rejected[r] == 1)
    erg_warn("agent message%s%.64s%s refused: %s (further ones with reason %s only counted: "
             "erg_agent_messages_total{result=\"rejected\",reason=\"%s\"})",
             node ? " of node '" : "", node ? node : "", node ? "'" : "", why, rn, rn);
}

/* ---- the meter lag across restarts ---- */

/* The last run's estimate, when there is one this configuration allows. */
static void node_lag_install(struct collector *c, struct node_state *n,
                             const struct node_stored *st) {
  if (st->lag_rc < 0) {
    if (c->lag_file_errors++ == 0)
      erg_warn("node %s: meter lag of the last run not used: %s (further ones only counted: "
               "erg_lag_file_errors_total)",
               n->name, st->lag_why);
    return;
  }
  if (st->lag_rc == 0)
    return;
  if (st->lag.lag_seconds > (int)c->cfg->lag_max_seconds) {
    erg_info("node %s: meter lag of the last run, %d s, is beyond lag_max_seconds (%u): "
             "estimating afresh",
             n->name, st->lag.lag_seconds, c->cfg->lag_max_seconds);
    return;
  }
  erg_lag_restore(&n->lag, st->lag.lag_seconds, st->lag.fraction_seconds, st->lag.correlation,
                  st->lag.confidence);
  n->lag_seconds = n->lag.lag_seconds;
  n->lag_shift_seconds = erg_lag_shift_seconds(&n->lag);
  n->lag_correlation = n->lag.correlation;
  n->lag_confidence = n->lag.confidence;
  erg_info("node %s: meter reading lags activity by %d s (from the last run); compensating "
           "until this run's data confirm or replace it",
           n->name, st->lag.lag_seconds);
}

static void node_lag_save(struct collector *c, struct node_state *n) {
  char path[1100], why[1300];
  struct erg_lag_saved s = {.lag_seconds = n->lag.lag_seconds,
                            .fraction_seconds = n->lag.lag_fraction_seconds,
                            .correlation = n->lag.correlation,
                            .confidence = n->lag.confidence,
                            .estimated_s = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S)};
  if (erg_lag_file_path(c->journal_dir, n->name, path, sizeof path) != 0)
    snprintf(why, sizeof why, "node name too long for a path");
  else if (erg_lag_file_write(path, &s, why, sizeof why) == 0)
    return;
  if (c->lag_file_errors++ == 0)
    erg_warn("node %s: meter lag not kept for the next start: %s (further failures only "
             "counted: erg_lag_file_errors_total)",
             n->name, why);
}

/* ---- the curve's tails' window across restarts (tailwin.c) ---- */

static void node_tailwin_install(struct collector *c, struct node_state *n,
                                 const struct node_stored *st) {
  if (st->tailwin_rc < 0) {
    if (c->tailwin_file_errors++ == 0)
      erg_warn("node %s: the tails' window of the last run not used: %s (further ones only "
               "counted: erg_tailwin_file_errors_total)",
               n->name, st->tailwin_why);
    return;
  }
  if (st->tailwin_rc == 0 || st->tailwin.chosen == 0)
    return; /* none, or the slices as they came: as a new node */
  if (n->cfg_index >= 0 && c->cfg->nodes[n->cfg_index].group >= 0)
    return; /* a shared meter's member takes its group's window
             * (grouptail.c, GROUP.group.tailwin): its own file, of the days
             * before its [group], is not applied */
  erg_tailwin_restore(&n->grid, &st->tailwin, erg_time_realtime_ns());
  n->tail_chosen = st->tailwin.chosen;
  erg_info("node %s: the curve's tails from windows of %d meter update(s) (from the last run, "
           "updates every %.3f s), until this run's data choose",
           n->name, st->tailwin.chosen >= 3 ? 2 : 1, st->tailwin.update_seconds);
}

void tailwin_save(struct collector *c, const char *kind, const char *name, const char *file,
                  int chosen, double update_seconds) {
  char path[1100], why[1300];
  struct erg_tailwin_saved s = {.chosen = chosen,
                                .update_seconds = update_seconds,
                                .chosen_s = (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S)};
  if (erg_tailwin_file_path(c->journal_dir, file, path, sizeof path) != 0)
    snprintf(why, sizeof why, "%s name too long for a path", kind);
  else if (erg_tailwin_file_write(path, &s, why, sizeof why) == 0)
    return;
  if (c->tailwin_file_errors++ == 0)
    erg_warn("%s %s: the tails' window not kept for the next start: %s (further failures "
             "only counted: erg_tailwin_file_errors_total)",
             kind, name, why);
}

void node_tailwin_save(struct collector *c, struct node_state *n, int chosen,
                       double update_seconds) {
  tailwin_save(c, "node", n->name, n->name, chosen, update_seconds);
}

/* Takes the node's stored state (loader thread or start). The samples
 * held meanwhile are node_loaded's to apply (ingest.c); a node read here
 * in collector_node is new and holds none. */
void node_install(struct collector *c, struct node_state *n, struct node_stored *st) {
  if (st->resume_s > 0)
    n->grid.next_final = st->resume_s - st->resume_s % (int64_t)c->cfg->step_seconds;
  if (st->journal_future_s) { /* once per node and start: a node loads once */
    /* New rows start a file: after the future ones, readers (erg fit)
     * would take them for cells journalled twice. */
    c->journal_future++;
    erg_journal_rotate(c->journal_dir, n->name);
    erg_warn("node %s: journal rows up to %lld lie %lld s in the future: ignored when choosing "
             "where to resume, the journal continues in a new file (erg_journal_future_total)",
             n->name, (long long)st->journal_future_s,
             (long long)(st->journal_future_s - (int64_t)(erg_time_realtime_ns() / ERG_NS_PER_S)));
  }
  n->journal_columns = st->journal_columns;
  n->user_names = st->names;
  memset(&st->names, 0, sizeof st->names);
  n->job_users = st->job_users;
  st->job_users = NULL;
  n->model = st->model;
  st->model = NULL;
  for (int k = 0; k < PROFILE_NKINDS; k++) {
    n->known[k] = st->known[k];
    memset(&st->known[k], 0, sizeof st->known[k]);
    keys_settle(c, n->name, profile_kind_names[k], &n->known[k],
                erg_collector_key_archives_max(c->cfg));
  }
  node_lag_install(c, n, st);
  node_tailwin_install(c, n, st);
  n->loaded = 1;
}

void node_estimate_lag(struct collector *c, struct node_state *n) {
  int before = n->lag.have_estimate ? n->lag.lag_seconds : -1, restored = n->lag.restored;
  int estimated =
      erg_lag_estimate(&n->lag, (int)c->cfg->lag_max_seconds, (int)c->cfg->lag_window_seconds);
  if (erg_lag_unresolved(&n->lag) && !n->lag_smeared_logged) {
    n->lag_smeared_logged = 1;
    erg_info("node %s: meter lag not estimated: the meter's energy comes in intervals longer "
             "than %.1f s (a coarse counter held between its moves, or slow polls), too coarse "
             "to time a lag; its data are used unshifted and the cells not flagged 16 (logged "
             "once; erg_node_lag_unresolved_cells_total)",
             n->name, ERG_LAG_MAX_SPAN_SECONDS);
  }
  if (!estimated)
    return;
  n->lag_seconds = n->lag.lag_seconds;
  n->lag_correlation = n->lag.correlation;
  n->lag_confidence = n->lag.confidence;
  n->lag_shift_seconds = erg_lag_shift_seconds(&n->lag);
  if (restored && !n->lag.restored && n->lag.lag_seconds == before)
    erg_info("node %s: meter lag of the last run, %d s, confirmed (r=%.2f)", n->name, before,
             n->lag.correlation);
  else if (n->lag.lag_seconds != before && before < 0)
    erg_info("node %s: meter reading lags activity by %d s (r=%.2f, margin %.2f over other "
             "lags, %d s paired); compensating (data moved back %.2f s)",
             n->name, n->lag.lag_seconds, n->lag.correlation, n->lag.confidence, n->lag.pairs,
             n->lag_shift_seconds);
  else if (n->lag.lag_seconds != before)
    erg_info("node %s: meter lag now %d s, %s %d s (r=%.2f, margin %.2f); %s", n->name,
             n->lag.lag_seconds, restored ? "not the last run's" : "was", before,
             n->lag.correlation, n->lag.confidence,
             erg_lag_near(before, n->lag.lag_seconds)
                 ? "a neighbour, as good for alignment: no cells flagged"
             : restored ? "cells since the start are flagged for the fit"
                        : "cells around the change are flagged for the fit");
  /* Kept for the next start when it is set, changed or confirmed: not
   * every 10 s (a file write per node on the loop). */
  if (n->lag.lag_seconds != before || restored != n->lag.restored)
    node_lag_save(c, n);
}
