// SPDX-License-Identifier: GPL-3.0-or-later
/* erg store: RRD archives under one root directory.
 *
 * Layout (names pass through erg_name_sanitize; see docs/store.md):
 *   <root>/nodes/<node>/node.rrd            measured, modelled, idle, dynamic,
 *                                           unattributed watts + estimated flag
 *   <root>/nodes/<node>/<kind>/<key>.rrd    one DS "watts" per profile key
 *                                           (jobs: also "sd" and "var", the
 *                                           95 % interval's parts)
 *   <root>/nodes/<node>/<kind>/index.tsv    sanitized name <TAB> original key
 *   <root>/nodes/<node>/name                the node's original name
 *   <root>/cluster/<kind>/<key>.rrd         cluster-wide archives (node = NULL
 *   <root>/cluster/<kind>/index.tsv         in the key functions), e.g. jobs
 * kind is "command", "job", "unit", "container", "user".
 * Updates must come in time order per file (RRD rejects older ones); the
 * collector finalises each cell once. */
#ifndef ERG_STORE_H
#define ERG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct erg_store_options {
  const char *root;      /* directory, created if missing */
  unsigned step_seconds; /* grid step, e.g. 5 */
  const char *rrdcached; /* daemon address or NULL (also RRDCACHED_ADDRESS env) */
  /* Days kept at each resolution of new archives: step, 1 min, 1 h, 1 day.
   * NULL: ERG_STORE_KEEP_DAYS_DEFAULT; 0 leaves that resolution out. */
  const double *keep_days;
};
#define ERG_STORE_RESOLUTIONS 4
#define ERG_STORE_KEEP_DAYS_DEFAULT                                                                \
  { 2, 14, 396, 3653 }

struct erg_store_node_cell {
  int64_t t_end;         /* unix seconds, end of the cell (multiple of step) */
  double measured_watts; /* NAN = unknown */
  double modelled_watts;
  double idle_watts;
  double dynamic_watts;
  double unattributed_watts;
  bool estimated;
};

struct erg_store;
int erg_store_open(struct erg_store **out, const struct erg_store_options *opt, char *why,
                   size_t whylen);
void erg_store_close(struct erg_store *s);

int erg_store_node_update(struct erg_store *s, const char *node,
                          const struct erg_store_node_cell *cell, char *why, size_t whylen);
/* One profile key's mean watts over the cell ending at t_end. node NULL
 * means the cluster-wide archive of that kind and key. */
int erg_store_key_update(struct erg_store *s, const char *node, const char *kind, const char *key,
                         int64_t t_end, double watts, char *why, size_t whylen);

/* The same with nds (1–8) data sources named ds (a new archive gets
 * them, all GAUGE; NAN values are unknown). An existing archive with fewer
 * sources — made before the later ones were added at the end — gets its
 * first ones only (its header says how many): e.g. a job archive of
 * "watts" only from before the interval's "sd" and "var" (docs/store.md). */
int erg_store_key_update_ds(struct erg_store *s, const char *node, const char *kind,
                            const char *key, int64_t t_end, const char *const *ds,
                            const double *vals, int nds, char *why, size_t whylen);

/* Archive headers read for their data source count (an update of more
 * sources than an archive may have): once per archive file while it stays
 * the same file (its count is cached per path, device, inode and size). */
uint64_t erg_store_header_reads(const struct erg_store *s);
/* Updates that found an archive locked by a reader and waited for it. */
uint64_t erg_store_lock_retries(const struct erg_store *s);

/* Time (unix s) of the node archive's last update, or 0 when there is
 * none: where the collector resumes after a restart. */
int64_t erg_store_node_last(const struct erg_store *s, const char *node);

/* Paths for readers (erg graph, web/). Return 0, or -1 if too long. */
int erg_store_node_path(const struct erg_store *s, const char *node, char *out, size_t outlen);
int erg_store_key_path(const struct erg_store *s, const char *node, const char *kind,
                       const char *key, char *out, size_t outlen);
const char *erg_store_root(const struct erg_store *s);
/* Directory of one kind of profile key (holds index.tsv and <key>.rrd). */
int erg_store_kind_dir(const struct erg_store *s, const char *node, const char *kind, char *out,
                       size_t outlen);
/* rrdcached address in use, or NULL when files are written directly:
 * readers pass it to librrd (--daemon) so cached updates are flushed first. */
const char *erg_store_daemon(const struct erg_store *s);

/* Writes <kind dir>/names.tsv: display names of keys, one "<key> TAB
 * <name>" line each (e.g. user names of uid keys, docs/store.md), replacing
 * the file atomically; creates the directory. tsv is written as given: the
 * caller makes each field one line without tabs. */
int erg_store_names_write(const struct erg_store *s, const char *node, const char *kind,
                          const char *tsv, char *why, size_t whylen);
/* Writes nodes/<node>/job/users.tsv: whose each job is on the node, one
 * "<job> TAB <uid>" line per job (the uid's name is in user/names.tsv),
 * replacing the file atomically (docs/store.md "Job users"). Same rules
 * as erg_store_names_write. */
int erg_store_job_users_write(const struct erg_store *s, const char *node, const char *tsv,
                              char *why, size_t whylen);
/* Writes nodes/<node>/job/commands.tsv: each job's first command, one
 * "<job> TAB <command>" line per job (a sibling of users.tsv, so readers
 * of users.tsv's two columns are unchanged). Same rules as
 * erg_store_names_write. */
int erg_store_job_commands_write(const struct erg_store *s, const char *node, const char *tsv,
                                 char *why, size_t whylen);

struct erg_store_expire_stats {
  uint64_t archives_seen; /* key archives looked at */
  uint64_t archives_removed;
  uint64_t bytes_freed;
};
/* Deletes key archives (nodes/<node>/<kind>/<key>.rrd) last updated more
 * than key_idle_seconds before now, and cluster/<kind>/<key>.rrd ones
 * idle for cluster_idle_seconds (0 = never, for either), dropping their
 * index.tsv lines (temp file + rename). Node archives are never expired.
 * Call it from the thread that updates the store (index.tsv is not
 * locked). Returns 0, or -1 with the first failure in why (the rest is
 * still done). stats may be NULL. */
int erg_store_expire(const struct erg_store *s, int64_t now, int64_t key_idle_seconds,
                     int64_t cluster_idle_seconds, struct erg_store_expire_stats *stats, char *why,
                     size_t whylen);

/* Deletes one key's archive and its index.tsv line now (a key evicted to
 * keep a node's archive count bounded). Same thread rule as expiry. A key
 * without archive is not an error. */
int erg_store_key_remove(const struct erg_store *s, const char *node, const char *kind,
                         const char *key, char *why, size_t whylen);

#endif
