// SPDX-License-Identifier: GPL-3.0-or-later
/* Internal to the collector library. */
#ifndef ERG_COLLECTOR_INT_H
#define ERG_COLLECTOR_INT_H

#include <stdatomic.h>

#include "erg_collector.h"

#define METER_ENDPOINT "inproc://erg-meters"

struct meter_msg {
  int source;
  int nchannels;
  char error[200]; /* "" when the poll succeeded */
  struct erg_pdu_reading readings[ERG_PDU_MAX_CHANNELS];
  double wrap_joules[ERG_PDU_MAX_CHANNELS]; /* counter modulus per channel, 0 = none */
  double poll_seconds; /* request to answer (or to giving up) for this source */
};

/* ---- config_power.c: power expressions, groups, their checks ---- */
/* Parses a power expression into feeds (adding channels to the sources'
 * poll lists); who ("[node.X]") starts every error. */
int cfg_power_parse(struct erg_collector_config *c, const char *who, const char *spec,
                    struct erg_node_feed *feeds, int *nfeeds, char *why, size_t whylen);
/* Makes the nodes of `list` (names by space or comma; node_index finds or
 * adds one) members of group g, giving them its feeds. Refuses a node in
 * two groups, a member with its own power and a group of none. */
int cfg_group_members(struct erg_collector_config *c, int g, const char *list,
                      int (*node_index)(void *user, const char *name), void *user, char *why,
                      size_t whylen);
/* Shares of a channel over 1, a channel of a whole PDU drawn twice, a
 * subtracted term that nobody draws. */
int cfg_power_check(const struct erg_collector_config *c, char *why, size_t whylen);

/* ---- groups.c: nodes behind one shared meter ---- */
struct collector;
struct node_state;
struct group_state;
/* After the configured nodes exist: c->groups and the members' group. */
int groups_build(struct collector *c);
void groups_free(struct collector *c);
/* The estimator the node's meter data are timed with: a member's is its
 * group's (the first member's, fed the group's summed activity). */
struct erg_lag *node_lag(struct collector *c, struct node_state *n);
/* A member other than the first: copies the group's estimate, never
 * estimates itself. */
bool node_lag_follows(const struct collector *c, const struct node_state *n);
/* Sets each member's share of the meter for cell t0 from their models'
 * predictions (equal when a member has none). */
void group_split_cell(struct collector *c, struct group_state *g, int64_t t0);

/* ---- grouptail.c: the members' tails' window, chosen for the group ---- */
/* Before cell t0 is split: notes the members' candidate tails and the
 * meter (a row of the choice's joint fits), starts or takes a choice, and
 * gives each member's open cell the chosen candidate's tails. */
void group_tailwin_cell(struct collector *c, struct group_state *g, int64_t t0);
void group_tailwin_free(struct group_state *g);
/* The choice's rows: per row the meter's power and each member's CPU and
 * disk per second, ncpu and candidates' tails (NaN: none). */
struct group_tail_member;
struct group_tail_rows {
  double *watts;
  struct group_tail_member *member; /* nrows × nmembers */
  int nmembers;
  size_t nrows, cap;
  unsigned step;
};
int group_tail_rows_alloc(struct group_tail_rows *r, int nmembers, size_t cap, unsigned step);
void group_tail_rows_free(struct group_tail_rows *r);
/* Row i (< cap; nrows is the caller's), member m. 0, or -1 out of range. */
int group_tail_rows_set(struct group_tail_rows *r, size_t i, double meter_watts, int m, double cpu,
                        double disk, double ncpu,
                        const double tails[ERG_TAILWIN_CANDS][ERG_NDERIVED]);
/* The joint fit's (erg_group_fit, per node with each member's curve, 4
 * folds) held-out RMSE per candidate in use, over the rows having every
 * candidate in use; NaN: not in use, or no fit with the members' curves.
 * The caller holds the fit lock; cancel may be NULL. */
void group_tail_choose(const struct group_tail_rows *r, const bool *use, const atomic_int *cancel,
                       double *rmse_watts);

struct meter_thread;
struct meter_thread *meters_start(void *zctx, const struct erg_collector_config *cfg,
                                  volatile int *stop);
void meters_join(struct meter_thread *ts, int n);

struct auth;
struct auth *auth_open(const char *authorized_keys_file, char *why, size_t whylen);
void auth_close(struct auth *a);
void auth_handle(struct auth *a, void *zap_socket);
uint64_t auth_refused_total(const struct auth *a);
uint64_t auth_accepted_total(const struct auth *a);
/* 1 when an agent message (as received from the agent socket) may be
 * ingested: its CURVE key is bound to every node name it carries, or to
 * none (docs/config.md "authorized_keys_file"); else 0, counted and logged
 * once per key. Always 1 without CURVE (a NULL). */
struct zmq_msg_t;
int auth_admit(struct auth *a, struct zmq_msg_t *msg);
/* The same for a message's bytes sent with the key at index key of the
 * file (-1: none), as auth_admit calls it; for tests. */
int auth_check_nodes(struct auth *a, int key, const void *buf, size_t len);
/* Watches the agent socket for handshakes that fail before ZAP (plaintext
 * agents, a wrong collector key); auth_poll, each loop round, counts and
 * logs them once. Both accept NULL. */
void auth_monitor(struct auth *a, void *zctx, void *agent_socket);
void auth_poll(struct auth *a);
/* erg_auth_refused_total, erg_auth_node_mismatch_total; nothing for NULL. */
void auth_metrics(const struct auth *a, FILE *f);

/* A node's power model (model.c): loaded from MODEL_DIR/NODE.json, picked
 * up again when the file changes, refitted on a schedule in a thread. */
struct node_model;
struct node_model *node_model_open(const struct erg_collector_config *cfg, const char *node,
                                   const char *journal_dir);
void node_model_close(struct node_model *nm);
/* Once a second from the loop: file check every ~10 s, refit start and
 * hand-over. Never blocks on a fit. */
void node_model_tick(struct node_model *nm, int64_t now);
/* A cell's measured power (the whole meter's for a group member, as
 * journalled), for the bounds a model must keep. */
void node_model_note_measured(struct node_model *nm, double watts);
/* Model files and refits refused as beyond bounds, for /metrics. */
uint64_t node_model_refused(const struct node_model *nm);
/* The directory the node's model file is read from (MODEL_DIR). */
const char *node_model_dir(const struct node_model *nm);
/* The attribution parameters for a cell; .model is NULL without a model. */
struct erg_cell_model node_model_cell(const struct node_model *nm);
/* 1 the first time it is called since the node's model was installed (a
 * cell beyond its training range is logged once per model), else 0. */
int node_model_first_beyond(struct node_model *nm);

/* ---- store writer thread (writer.c) ----
 * The loop queues updates into a batch; writer_commit hands the batch to
 * the thread, which writes them in order. writer_stop drains the queue. */
struct erg_store;
struct erg_store_node_cell;
struct writer;
struct writer *writer_start(struct erg_store *store, size_t max_pending);
void writer_node(struct writer *w, const char *node, const struct erg_store_node_cell *cell);
/* node NULL: the cluster-wide archive of kind/key. */
void writer_key(struct writer *w, const char *node, const char *kind, const char *key,
                int64_t t_end, double watts);
/* The same with nds data sources (erg_store_key_update_ds); ds must stay
 * valid until written (a static array). */
#define WRITER_MAX_DS 3
void writer_key_ds(struct writer *w, const char *node, const char *kind, const char *key,
                   int64_t t_end, const char *const *ds, const double *vals, int nds);
void writer_expire(struct writer *w, int64_t now, int64_t key_idle_seconds,
                   int64_t cluster_idle_seconds);
void writer_remove_key(struct writer *w, const char *node, const char *kind, const char *key);
/* Replaces the kind's names.tsv of node with tsv. */
void writer_names(struct writer *w, const char *node, const char *kind, const char *tsv);
/* nodes/<node>/job/users.tsv: "<job> TAB <uid>" lines (jobusers.c). */
void writer_job_users(struct writer *w, const char *node, const char *tsv);
/* nodes/<node>/job/commands.tsv: "<job> TAB <command>" lines (jobusers.c). */
void writer_job_commands(struct writer *w, const char *node, const char *tsv);

/* ---- jobusers.c: whose each job on a node is, for erg jobs/report ---- */
struct job_users;
/* Notes that a process of job (len bytes) ran as uid. A job's user is its
 * first uid other than root (slurmstepd runs as root inside the job), root
 * only while no other was seen. Keeps the JOB_USERS_MAX jobs seen last.
 * Returns 1 when the file should be written again, 0 when unchanged, -1
 * out of memory. */
#define JOB_USERS_MAX 256
int job_users_note(struct job_users **ju, const char *job, size_t len, uint32_t uid, int64_t now);
/* Reads the file an earlier run wrote (if any) into *ju, created empty
 * when NULL, so that a rewrite keeps the jobs before a restart. */
int job_users_load(struct job_users **ju, const char *path);
/* The file's text (malloc'd), NULL when none or out of memory. */
char *job_users_tsv(const struct job_users *ju);
/* Notes the command (clen bytes, cut to JOB_COMMAND_MAX - 1) of a process
 * of job that ran as uid, noted before by job_users_note: the first one of
 * the job's user stays the job's (its name for erg jobs; slurmstepd's as
 * root only until the user's first process), never the name of root's first
 * process in the job (the launcher's child between setuid and exec; taken
 * back if the launcher is seen after it). Returns 1 when it changed. */
#define JOB_COMMAND_MAX 33
int job_users_command(struct job_users *ju, const char *job, size_t len, uint32_t uid,
                      const char *comm, size_t clen);
/* nodes/<node>/job/commands.tsv: "<job> TAB <command>" lines, for the jobs
 * with a command (malloc'd; NULL when no job or out of memory). */
char *job_commands_tsv(const struct job_users *ju);
void job_users_free(struct job_users *ju);
void writer_commit(struct writer *w);
size_t writer_pending(struct writer *w);
/* Ops committed so far (a mark), and whether the thread has carried out
 * all those up to a mark: "what was queued by now is written" holds on
 * a writer that is never idle, where writer_pending never reaches 0. */
uint64_t writer_committed(const struct writer *w);
int writer_done_through(struct writer *w, uint64_t mark);
uint64_t writer_errors(struct writer *w);
uint64_t writer_dropped(struct writer *w);
void writer_stop(struct writer *w);

/* ---- write-ahead log of inputs (wal.c) ----
 * Open, replay what the last run left, start a segment, then append each
 * input before applying it and tick once a second. */
enum wal_type { WAL_AGENT = 1, WAL_METER = 2, WAL_METER_STATE = 3 };
struct wal;
struct wal_stats {
  uint64_t appended, replayed, torn, dropped, errors, bytes;
};
/* layout: a number that changes with the records' binary layout (a record
 * of another layout is never replayed). */
struct wal *wal_open(const char *dir, uint32_t layout, uint64_t max_bytes, int fsync_each_tick,
                     char *why, size_t whylen);
typedef void (*wal_record_fn)(void *user, int type, int64_t data_s, const uint8_t *data,
                              size_t len);
/* Every whole record of the segments found at open, oldest first; a torn or
 * corrupt record ends its segment (counted, logged once). Files unchanged. */
void wal_replay(struct wal *w, wal_record_fn fn, void *user);
/* A new segment for appends; 0 or -1 (counted in errors). */
int wal_start(struct wal *w, int64_t now_s);
/* data_s: the latest time (s) the input has data for. 0, or -1 (not
 * logged: full, or a write error; counted). */
int wal_append(struct wal *w, int type, const void *data, size_t len, int64_t data_s);
/* Syncs (fsync_each_tick), rotates every rotate_seconds and deletes closed
 * segments whose data all ends at or before done_s. 1 when a new segment
 * was started (the caller re-logs state the old ones held). */
int wal_tick(struct wal *w, int64_t now_s, int64_t done_s, int64_t rotate_seconds);
void wal_stats(const struct wal *w, struct wal_stats *out);
/* Syncs and closes; the segments stay for the next start. */
void wal_close(struct wal *w);
/* ---- meter channel -> node feeds (feeds.c) ---- */
struct feed_ref {
  int node; /* index into cfg->nodes */
  int feed; /* index into that node's feeds */
};
struct feed_index;
struct feed_index *feed_index_build(const struct erg_collector_config *cfg);
/* The feeds on a source's channel (*n of them, in config order). */
const struct feed_ref *feed_index_find(const struct feed_index *fi, int source, int channel,
                                       size_t *n);
void feed_index_free(struct feed_index *fi);

/* The config's http_* keys as the server takes them (config.c). */
struct erg_web_server_limits;
void erg_collector_http_limits(const struct erg_collector_config *c,
                               struct erg_web_server_limits *l);

/* ---- page rendering thread (render.c) ---- */
struct renderer;
/* A render past timeout_seconds (<= 0: never) is killed and counted. */
struct renderer *renderer_start(const struct erg_store *store, const char *www_dir,
                                const char *model_dir, const char *image_format,
                                double timeout_seconds);
/* Hands a render of these nodes' pages to the thread: 0, 1 when a render
 * is still running (ask again later), -1 out of memory. */
int renderer_submit(struct renderer *r, const char *const *nodes, size_t n, int64_t now);
/* Renders by result (erg_page_renders_total). */
enum { RENDER_OK, RENDER_FAILED, RENDER_TIMEOUT, RENDER_NRESULTS };
uint64_t renderer_count(const struct renderer *r, int result);
/* Kills a render in progress; one queued but not started is dropped. */
void renderer_stop(struct renderer *r);

/* ---- profile keys (profile.c) ---- */
enum profile_kind {
  PROFILE_COMMAND,
  PROFILE_JOB,
  PROFILE_UNIT,
  PROFILE_CONTAINER,
  PROFILE_USER,
  PROFILE_NKINDS
};
extern const char *const profile_kind_names[PROFILE_NKINDS];
#define PROFILE_KEY_MAX 400 /* longest tuple profile_key_build makes, with NUL */
/* The grid key of a process: its grouping keys as one tuple string. */
void profile_key_build(char *out, size_t outlen, const char *comm, const char *job,
                       const char *unit, const char *container, uint32_t uid);
/* Field `kind` of a tuple (not NUL-terminated; length returned, 0 = none). */
size_t profile_key_field(const char *tuple, int kind, const char **start);

struct profile_entry {
  const char *key;
  double watts;
  /* The key's interval parts in the cell (docs/model.md, "Uncertainty"):
   * linear sd (W) and variance (profile_rollup: W²; unc_keys_scale: × step,
   * J²/s, as written); written only where keys_write is told to (unc),
   * NAN: unknown. */
  double sd_watts, var_watts2;
};
/* A cell's shares rolled up per kind. out[k]: the keys to write — the top
 * N values, then "[none]" (processes without that key), "[other]" (the
 * rest) and "[system]"; Σ out[k] == Σ shares for every k. all[k]: every
 * value (not [none]), by watts, for cluster sums. */
struct profile_rollup {
  struct profile_entry *out[PROFILE_NKINDS], *all[PROFILE_NKINDS];
  size_t nout[PROFILE_NKINDS], nall[PROFILE_NKINDS];
  char *arena;
  size_t arena_cap, used;
};
struct profile_known;
/* Which values get a key of their own: the top N, and of those a value
 * the node has no archive for (not in known[kind]) only with at least
 * min_share of the cell's power (total_watts). known NULL: top N only. */
struct profile_admit {
  const struct profile_known *known; /* [PROFILE_NKINDS] */
  unsigned top;
  double min_share, total_watts;
};
/* sh[0..nkeys) tuples, sh[nkeys] "[system]". 0 or -1 (out of memory). */
int profile_rollup(struct profile_rollup *r, const struct erg_attr_share *sh, size_t nkeys,
                   const struct profile_known *known, unsigned top, double min_share);
void profile_rollup_free(struct profile_rollup *r);

/* Keys an archive was written for: they get 0 W while absent, until idle
 * longer than key_expire_seconds; joules feeds /metrics counters. */
struct profile_known_key {
  char *key;
  int64_t last_t;
  double joules;
  double watts;                  /* mean power in the last cell written (0 when absent) */
  double sd_joules, var_joules2; /* Σ sd · step and Σ var · step of the interval (unc) */
};
struct profile_known {
  struct profile_known_key *keys;
  size_t n, cap;
  uint32_t *index;
  size_t index_len;
};
/* Pointers are valid until the next touch or expire on the same set. */
struct profile_known_key *profile_known_find(const struct profile_known *k, const char *key);
/* Finds or adds key (last written at t). A full set (max_keys) first drops
 * the key idle longest; its name goes to *evicted (caller frees) when
 * evicted is not NULL. */
struct profile_known_key *profile_known_touch(struct profile_known *k, const char *key, int64_t t,
                                              size_t max_keys, char **evicted);
/* Removes the named key idle longest and returns its name (caller frees);
 * NULL when only [other], [none] and [system] are left: never evicted. */
char *profile_known_pop_oldest(struct profile_known *k);
size_t profile_known_expire(struct profile_known *k, int64_t now, int64_t max_idle_seconds);
void profile_known_free(struct profile_known *k);
/* Adds the keys of a store kind directory (index.tsv) whose archives were
 * updated within max_idle_seconds (0: all); returns how many. */
size_t profile_known_load(struct profile_known *k, const char *dir, int64_t now,
                          int64_t max_idle_seconds);

/* ---- user names of uid keys (usernames.c) ----
 * The agent resolves names on the node; the collector keeps, per node, the
 * last name seen for each uid (bounded), sanitised, and has the writer
 * store them in the user kind's names.tsv beside the archives. */
#define USER_NAME_MAX 65    /* 64 bytes of name */
#define USER_NAMES_MAX 4096 /* uids named per node */
struct user_names {
  struct user_name_entry {
    uint32_t uid;
    char name[USER_NAME_MAX];
  } * e; /* sorted by uid */
  size_t n, cap;
  int dirty; /* changed since the last user_names_tsv */
};
/* Makes a received name safe to keep and show: at most 64 bytes (cut on a
 * UTF-8 boundary), control bytes, DEL and invalid UTF-8 as '?', a leading
 * '[' as '?' (the collector's own keys). Returns 1 when it changed it. */
int user_name_clean(const char *in, char out[USER_NAME_MAX]);
/* Sets uid's name (already clean): 1 changed, 0 same, -1 full. */
int user_names_set(struct user_names *m, uint32_t uid, const char *name);
/* The name of a user key (a decimal uid), or NULL. */
const char *user_names_get(const struct user_names *m, const char *key);
/* Reads a names.tsv written before (restarts); returns how many. */
size_t user_names_load(struct user_names *m, const char *path);
/* The map as names.tsv text (malloc'd), clears dirty; NULL no memory. */
char *user_names_tsv(struct user_names *m);
void user_names_free(struct user_names *m);

/* ---- a node's stored state, read off the loop (nodeload.c) ---- */
struct node_stored {
  int64_t resume_s;            /* end of the last stored or journalled cell; 0 none */
  int64_t journal_future_s;    /* end of journal rows too far ahead, ignored; 0 none */
  unsigned journal_columns;    /* optional columns of the journal's header */
  struct user_names names;     /* names.tsv of the user kind */
  struct job_users *job_users; /* job/users.tsv (jobusers.c) */
  struct profile_known known[PROFILE_NKINDS]; /* key archives written lately */
  struct node_model *model;                   /* NULL: out of memory */
  struct erg_lag_saved lag;                   /* the meter lag of the last run, when lag_rc is 1 */
  int lag_rc;                                 /* erg_lag_file_read's: 1 read, 0 none, -1 lag_why */
  char lag_why[1300];
  struct erg_tailwin_saved tailwin; /* the tails' window chosen last run, when tailwin_rc is 1 */
  int tailwin_rc;                   /* erg_tailwin_file_read's: 1 read, 0 none, -1 tailwin_why */
  char tailwin_why[1300];
};
/* Blocking reads of a node's stored state (the loader threads, or start). */
void node_stored_read(const struct erg_collector_config *cfg, const struct erg_store *store,
                      const char *journal_dir, const char *node, int64_t now,
                      struct node_stored *st);
/* Frees what is left in st (parts taken are zeroed by the taker). */
void node_stored_free(struct node_stored *st);
struct node_loader;
struct node_loader *node_loader_start(const struct erg_collector_config *cfg,
                                      const struct erg_store *store, const char *journal_dir);
/* Queues a read of node's state; tag comes back with the result. 0 or -1. */
int node_loader_submit(struct node_loader *l, const char *node, void *tag);
/* Hands every finished read to fn (loop thread); returns how many. */
typedef void (*node_loaded_fn)(void *user, void *tag, struct node_stored *st);
size_t node_loader_collect(struct node_loader *l, node_loaded_fn fn, void *user);
/* Drops queued reads, waits for those running, frees unclaimed results. */
void node_loader_stop(struct node_loader *l);

/* ---- cluster-wide job sums (cluster.c) ---- */
struct cluster;
struct cluster *cluster_new(void);
void cluster_free(struct cluster *cl);
/* Adds a node's job watts to the cell ending at t_end: 0, 1 when that
 * cell was already handed out (counted in cluster_late), -1 no memory.
 * job NULL only makes sure the cell exists, so known jobs get their 0 W
 * while no job runs anywhere. */
int cluster_add(struct cluster *cl, int64_t t_end, const char *job, double watts);
/* The same with the job's interval parts (profile_entry's sd_watts, added
 * linearly over nodes, and var_watts2, added; NAN stays NAN). */
int cluster_add_unc(struct cluster *cl, int64_t t_end, const char *job, double watts, double sd,
                    double var);
uint64_t cluster_late(const struct cluster *cl);
/* Hands out, oldest first, every pending cell with t_end <= done_until. */
typedef void (*cluster_cell_fn)(void *user, int64_t t_end, const struct profile_entry *jobs,
                                size_t njobs);
void cluster_flush(struct cluster *cl, int64_t done_until, cluster_cell_fn fn, void *user);

/* ---- the data dir's format version (datadir.c) ---- */
/* DATA_DIR/FORMAT holds "erg-data ERG_DATA_FORMAT". Bump it (and add the
 * step to datadir.c's format_migrate) when a release changes the data dir
 * so that an older ergd would misread it or a newer one needs to convert
 * it: a path or file name moved, a journal or index.tsv column changed
 * meaning, RRD data sources changed in place. Adding a file an older ergd
 * ignores needs no bump. */
#define ERG_DATA_FORMAT 1
/* Checks dir's FORMAT before anything else touches the dir, and writes it
 * (atomically) where it is missing (a new dir, or one of an erg from
 * before FORMAT: same layout as format 1) or older (after migrating).
 * 0: go on; note is "" or a line to log (marked, migrated). -1: refuse to
 * use the dir (a newer or garbled FORMAT, an I/O error); why says why and
 * nothing in the dir was changed. Logs nothing. */
int datadir_prepare(const char *dir, char *note, size_t notelen, char *why, size_t whylen);

#endif
