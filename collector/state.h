// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's loop state, shared by collector.c (the loop), the files it calls
 * (ingest.c, cells.c, nodes.c, ...) and metrics.c (the /metrics body).
 * Everything here belongs to the loop thread, except the rendered metrics
 * bodies (metrics_lock). */
#ifndef ERG_COLLECTOR_STATE_H
#define ERG_COLLECTOR_STATE_H

#include <pthread.h>
#include <time.h>

#include "collector_int.h"
#include "ingest_check.h"

/* Known cluster-wide jobs (per node and kind: key_archives_max). */
#define CLUSTER_MAX_KNOWN_JOBS 4096
/* How long an absent cluster-wide job still gets 0 W written. */
#define CLUSTER_JOB_ZERO_SECONDS 3600

/* writer.c: store errors said once per spell (issue 23: a full disk was
 * said once, without a reason, and never again, not even when it was
 * over). The first error of a spell is logged with its reason, the rest
 * only counted; the spell ends, and that is logged, once no write failed
 * for STORE_RECOVERED_SECONDS: on a full disk, archive creations fail
 * while updates of existing ones go on. why NULL: a write that worked.
 * Returns 1 when the error was logged, 2 the recovery, else 0. */
#define STORE_RECOVERED_SECONDS 60
struct store_spell {
  bool failing;
  int64_t first_s, last_s; /* the spell's first and latest error */
  uint64_t spell_errors;
};
int store_spell_note(struct store_spell *sp, const char *why, int64_t now_s);

/* An agent message held while its node's stored state is read. */
struct held_msg {
  struct held_msg *next;
  size_t len;
  uint8_t data[];
};
/* Messages held while state loads, per node (an agent's backlog after an
 * outage comes at once: 20 minutes are 1,200) and in all; beyond, dropped
 * and counted. */
#define NODE_HELD_MAX 4096
#define NODE_HELD_MAX_BYTES (256u << 20)

struct node_state {
  char name[128];
  int cfg_index; /* its [node.NAME] in cfg->nodes, -1 none */
  /* Stored state installed (nodeload.c). Until then the node's samples
   * are held in arrival order, not applied, and it is not finalised. */
  int loaded;
  struct held_msg *held, *held_tail;
  unsigned nheld;
  double idle_watts;
  struct erg_grid grid;
  uint64_t samples, dropped_samples, last_seen_ns;
  uint64_t overlap_samples;   /* refused: time already covered by this node */
  uint64_t resent_duplicates; /* resent copies of samples already had: no-ops */
  /* The agent's eBPF health (Sample.bpf), summed; has_bpf once one came. */
  int has_bpf;
  uint64_t bpf_map_full_drops, bpf_lost_exit_ns, bpf_unseen_switches, bpf_unsettled;
  struct erg_coverage covered; /* time of the accepted samples */
  char boot_id[40];
  double last_measured_watts, last_idle_watts, last_modelled_watts;
  double lag_seconds, lag_correlation; /* for /metrics; NAN until estimated */
  double lag_confidence;               /* r margin over the best rival lag; NAN until estimated */
  double lag_shift_seconds; /* how far the meter data are moved back (erg_lag_shift_seconds) */
  /* The curve's tails' window (tailwin.c): the chosen one (0: the agent's
   * slices as they came) and the meter's update period seen; NAN until
   * known. tail_choices: erg_tailwin_status's choices when last looked. */
  double tail_window_seconds, meter_update_seconds;
  unsigned tail_choices;
  int tail_chosen;
  uint64_t lag_unsure_cells;     /* cells journalled with ERG_CELL_LAG_UNSURE */
  uint64_t lag_unresolved_cells; /* cells aligned unshifted: meter too coarse for a lag */
  int lag_smeared_logged;        /* said once that the meter is too coarse */
  /* Energy over the cells so far (this run), for /metrics counters. */
  double measured_joules, idle_joules, dynamic_joules, unattributed_joules;
  /* dynamic_joules' uncertainty (docs/model.md, "Uncertainty"): linear sd
   * in J and variance in J² over the same cells; both 0 without intervals. */
  double dynamic_sd_joules, dynamic_var_joules2;
  struct erg_lag lag;
  uint64_t out_of_range_cells; /* cells with a feature beyond the model's training range */
  struct profile_known known[PROFILE_NKINDS];
  int has_data;
  struct node_model *model;             /* NULL until installed, or out of memory: uses check */
  unsigned journal_columns;             /* optional journal columns: sticky once seen */
  struct erg_journal_file journal_file; /* its current file, so appends skip the header */
  unsigned ncpu;                        /* from the agent's NodeTotals; 0 until seen */
  struct user_names user_names;         /* uid -> name as the node's agent resolved it */
  uint64_t user_names_sanitized, user_names_dropped; /* names changed / not kept */
  struct ingest_ref ingest; /* its agent's hello and usual interval (ingest_check.h) */
  /* Member of a shared meter's group (groups.c): index into c->groups,
   * -1 none; its share of the meter in the cell being finalised. */
  int group;
  double share;
  int share_equal; /* share is an equal split (a member without a model) */
  /* sd (W) of the member's part of the meter from the members' coefficient
   * errors (groups.c; the same in every cell: adds linearly) */
  double share_sd_watts;
  struct job_users *job_users; /* whose its jobs are (jobusers.c) */
  struct node_gpus *gpus;      /* NULL until a sample had GPU energy (gpu.c) */
};

/* gpu.c: a node's GPUs as its samples named them, for /metrics. */
#define NODE_GPUS_MAX 64 /* INGEST_MAX_GPUS */
struct node_gpu {
  uint32_t index;
  char uuid[ERG_NAME_MAX]; /* sanitised */
  double power_watts;      /* mean board power of the last sample */
  double energy_joules;    /* board energy of the accepted samples (this run) */
};
struct node_gpus {
  size_t n;
  struct node_gpu gpu[NODE_GPUS_MAX];
  /* Jobs with a gpu_job archive (key_archives.c): 0 W while absent, as
   * the job archives; read from the store at the first GPU cell. */
  struct profile_known known;
  int known_loaded;
};

/* gpu.c: the GPU part of the jobs' attributed energy (their gpu_job
 * archives), summed over nodes, for /metrics; bounded, the job seen
 * longest ago makes room. */
#define GPU_JOBS_MAX 4096
struct gpu_job {
  char job[128];
  double joules;
  int64_t last_t;
};
struct gpu_jobs {
  size_t n;
  struct gpu_job job[GPU_JOBS_MAX];
};

/* A [group.NAME]: nodes behind one meter, split per cell by their models. */
struct group_state {
  const struct erg_group_config *cfg;
  struct node_state *members[ERG_MAX_GROUP_NODES];
  int nmembers;
  uint64_t equal_split_cells; /* cells split equally: a member had no model */
  int equal_said;             /* logged once until every member has a model */
  /* The members' cross covariance (MODEL_DIR/group/NAME.json, erg fit
   * --group) of the fit the members' models are of; NULL: none (the split's
   * intervals then take the members as independent). cov_stamp: the
   * members' models' created_unix_seconds it was last looked for (NAN:
   * not yet), cov_mtime the file's then; cov_index[m]: member m in it. */
  struct erg_group_cov *cov;
  double cov_stamp;
  struct timespec cov_mtime; /* of the file at the last attempt ({0}: none) */
  int cov_index[ERG_MAX_GROUP_NODES];
  uint64_t cross_cov_cells;      /* cells whose split took the cross terms */
  struct group_tailwin *tailwin; /* the members' window (grouptail.c); NULL: none yet */
};

struct source_state {
  struct erg_pdu_counter counters[ERG_PDU_MAX_CHANNELS];
  uint64_t polls, errors;
  double poll_seconds; /* duration of the last poll (once polls > 0) */
  int failing;
  int nchannels;                              /* channels of the last poll */
  bool coarse_logged[ERG_PDU_MAX_CHANNELS];   /* coarse counter said once per channel */
  bool held_logged[ERG_PDU_MAX_CHANNELS];     /* holding said once per channel */
  bool power_estimated[ERG_PDU_MAX_CHANNELS]; /* last reading: W from A x V x PF */
  /* When the channel's power reading took its current value (ns; 0: not
   * known): the start of the sample's hold (collector_sample_var). */
  uint64_t value_since_ns[ERG_PDU_MAX_CHANNELS];
  /* A typical hold (s; 0: none yet): the mean of the holds up to the
   * gap a poll may bridge, over the last ~10. */
  double hold_typical_seconds[ERG_PDU_MAX_CHANNELS];
  bool estimated_logged[ERG_PDU_MAX_CHANNELS];
  uint64_t bad_values[ERG_PDU_MAX_CHANNELS];    /* readings with a value that is no reading */
  uint64_t energy_resets[ERG_PDU_MAX_CHANNELS]; /* counter went back: interval skipped */
  bool reset_logged[ERG_PDU_MAX_CHANNELS];      /* said once until it counts up again */
  /* Values outside 0..max_watts dropped (meter_check.c), said once. */
  uint64_t out_of_range[ERG_PDU_MAX_CHANNELS];
  bool range_logged[ERG_PDU_MAX_CHANNELS];
  /* After a WAL replay: the next reading may bridge the restart's gap
   * with the energy counter's difference (durable.c). */
  bool bridge[ERG_PDU_MAX_CHANNELS];
};

struct collector {
  const struct erg_collector_config *cfg;
  struct node_state **nodes;
  size_t nnodes;
  struct node_state **node_index; /* open addressing by name hash */
  size_t node_index_len;          /* power of two > 2 * ERG_MAX_NODES */
  struct source_state *sources;
  struct feed_index *feeds;   /* meter channel -> node feeds */
  struct group_state *groups; /* [group.NAME], as cfg->groups */
  int ngroups;
  struct erg_store *store;
  struct writer *writer;     /* all archive writes go through its thread */
  struct renderer *renderer; /* pages, in their own thread */
  struct cluster *cluster;
  struct profile_known cluster_jobs;
  int cluster_jobs_loaded;
  /* The GPU part of the cluster-wide job sums (cluster/gpu_job/), as
   * cluster and cluster_jobs; cells only from nodes with a GPU model. */
  struct cluster *gpu_cluster;
  struct profile_known cluster_gpu_jobs;
  int cluster_gpu_jobs_loaded;
  struct auth *auth; /* NULL: plain TCP, no CURVE */
  char journal_dir[600];
  uint64_t msgs_ok, store_errors;
  struct store_spell journal_spell;        /* journal appends (store_spell_note) */
  uint64_t msgs_rejected[INGEST_NREASONS]; /* agent messages refused, by reason */
  /* Nodes without a [node.NAME] section (nodes.c): the sanitised names of
   * those with archives at the start (sorted), and how many have archives
   * or were admitted since; new ones beyond max_unconfigured_nodes are
   * refused, said at most once a minute. */
  char (*stored_names)[ERG_NAME_MAX];
  size_t nstored;
  unsigned unconfigured;
  uint64_t unknown_refused_unsaid;
  int64_t unknown_said_s;
  uint64_t keys_evicted;             /* per-node key archives removed to stay under the cap */
  struct node_loader *loader;        /* NULL until the loop runs: reads then block */
  uint64_t held_total, held_dropped; /* samples held while a node's state loaded */
  uint64_t lag_file_errors;          /* JOURNAL_DIR/NODE.lag unreadable or not written */
  uint64_t tailwin_file_errors;      /* JOURNAL_DIR/NODE.tailwin unreadable or not written */
  uint64_t journal_future;           /* nodes whose journal ended too far ahead (nodes.c) */
  size_t held_bytes;                 /* held now, all nodes */
  struct wal *wal;                   /* NULL: wal = no, or it could not open */
  int replaying;                     /* inputs come from the WAL: not logged again */
  int64_t replay_oldest_s;           /* older inputs are not replayed (durable.c) */
  uint64_t replay_stale;
  struct meter_msg *last_meter; /* per source, the last reading, for WAL rotation */
  int64_t last_render;
  int render_due;
  int render_marked;     /* render_after is set */
  uint64_t render_after; /* the writer's mark when the first render came due */
  int keys_dirty;        /* key counters changed since the keys section was rendered */
  /* Scratch for one sample's processes and their tuple keys. */
  struct erg_grid_proc *procbuf;
  char *keybuf;
  size_t procbuf_cap;
  pthread_mutex_t metrics_lock;
  /* /metrics is rendered when asked (metrics.c): the HTTP thread counts an
   * ask, wakes the loop (metrics_wake_fd, an eventfd in its poll) and
   * waits on metrics_cond until a render that began after its ask is
   * published; 5,000 nodes' series every second cost a fifth of a core. */
  pthread_cond_t metrics_cond;
  int metrics_wake_fd;       /* -1: none; asks then get the last body */
  int metrics_live;          /* the loop answers asks (under metrics_lock) */
  uint64_t metrics_asked;    /* asks so far (under metrics_lock) */
  uint64_t metrics_rendered; /* asks the last published body answers */
  uint64_t metrics_renders;  /* renders so far (erg_metrics_renders_total) */
  char *metrics;             /* last rendered /metrics body: cheap part, when asked */
  size_t metrics_len;
  char *metrics_keys; /* per-key counters, rendered when keys_dirty */
  size_t metrics_keys_len;
  struct gpu_jobs *gpu_jobs; /* NULL until a job had GPU energy under a model (gpu.c) */
};

/* nodes.c: a node by name (created with create, its stored state read or
 * queued for the loader), NULL past ERG_MAX_NODES or for a bad name. */
struct node_state *collector_node(struct collector *c, const char *name, int create);
/* nodes.c: the node an agent message names: a known one, or a new one
 * admitted (max_unconfigured_nodes); NULL, counted and logged, when
 * refused. */
struct node_state *node_for_message(struct collector *c, const char *name);
/* nodes.c: at start, the unconfigured nodes that have archives. */
void nodes_scan_stored(struct collector *c);
/* nodes.c: installs a node's stored state (its held samples: node_loaded). */
void node_install(struct collector *c, struct node_state *n, struct node_stored *st);
/* nodes.c: re-estimates the node's meter lag, kept on disk when it changes. */
void node_estimate_lag(struct collector *c, struct node_state *n);
/* Keeps the node's tails' window choice for the next start (nodes.c);
 * tailwin_save: of a node or group ("node"/"group" kind, its name) in
 * JOURNAL_DIR/FILE.tailwin, a failure logged once, counted. */
void node_tailwin_save(struct collector *c, struct node_state *n, int chosen,
                       double update_seconds);
void tailwin_save(struct collector *c, const char *kind, const char *name, const char *file,
                  int chosen, double update_seconds);
/* nodes.c: counts a refused message and logs it once per node and
 * reason (n NULL: once overall; unknown_node_cap: once a minute). */
void ingest_refuse(struct collector *c, struct node_state *n, const char *node,
                   enum ingest_reason r, const char *why);
/* meter_check.c: the outlet (Modbus: unit id) number of a source's channel */
int collector_outlet(const struct collector *c, int source, int ch);
/* The same as logs name it, with its unit where it has one ("210.5"). */
const char *collector_channel(const struct collector *c, int source, int ch, char *buf, size_t len);
const char *collector_level(const struct collector *c, int source, int ch);

/* ingest.c: one input, with the checks of live input (the loop, and the
 * WAL's replay). */
void collector_ingest(struct collector *c, const uint8_t *buf, size_t len);
void collector_meter(struct collector *c, const struct meter_msg *m);
/* ingest.c: installs a loaded node's stored state, then applies the
 * samples held meanwhile (node_loader_collect). */
void node_loaded(void *user, void *tag, struct node_stored *st);

/* cells.c: finalises every loaded node's cells that can get no more data
 * (once a second), and the cluster cells they complete. */
void collector_finalize(struct collector *c, int64_t now);
/* cells.c: closes the node's complete cells early when a sample ending at
 * t_end_ns lies past its grid's window (an agent's backlog). */
void node_make_room(struct collector *c, struct node_state *n, uint64_t t_end_ns);
/* cells.c: the longest an energy counter is held (pdu.c), seconds. */
#define COUNTER_HOLD_MAX_SECONDS 300
unsigned collector_hold_max_seconds(const struct collector *c);

/* key_archives.c: a node's cell's profile keys into their archives, its
 * jobs into the cluster sums. */
void node_write_keys(struct collector *c, struct node_state *n, int64_t t_end,
                     const struct erg_attr_share *sh, size_t nkeys);
/* key_archives.c: a node's cell's GPU part: per job (e, into
 * nodes/NODE/gpu_job/, 0 W for known jobs absent) and the node's whole
 * (into gpu/node.rrd; NAN: unknown, not written). */
void node_write_gpu_keys(struct collector *c, struct node_state *n, int64_t t_end,
                         const struct profile_entry *e, size_t ne, double node_watts);
/* key_archives.c: drops key archives over max_keys after a restart. */
void keys_settle(struct collector *c, const char *node, const char *kind,
                 struct profile_known *known, size_t max_keys);
/* key_archives.c: a cluster cell's job sums into their archives (a
 * cluster_cell_fn; user is the collector). */
void cluster_write_cell(void *user, int64_t t_end, const struct profile_entry *jobs, size_t njobs);
/* key_archives.c: the same for the GPU part of the job sums (cluster/gpu_job/). */
void cluster_write_gpu_cell(void *user, int64_t t_end, const struct profile_entry *jobs,
                            size_t njobs);

/* key_archives.c: one cell's values of a known-key set (0 W for the
 * known keys absent), and the set as the store holds it after a restart.
 * unc: the entries' sd_watts and var_watts2 too (a job archive's
 * interval parts; summed into the known keys' sd_joules, var_joules2). */
void keys_write(struct collector *c, const char *node, const char *kind,
                struct profile_known *known, const struct profile_entry *e, size_t n, int64_t t_end,
                size_t max_keys, int unc);
void keys_load(struct collector *c, const char *node, const char *kind, struct profile_known *known,
               int64_t now, size_t max_keys);

/* uncertainty.c (docs/model.md, "Uncertainty"): what is known of a node's
 * cell power besides the model (meter quantum and noise, A x V readings,
 * lag, a shared meter's split, the model's misfit); the keys' interval
 * parts of a cell, as profile_rollup sums them, scaled as the key archives
 * store them (key_archives.c); the node's dynamic power's into
 * nodes/NODE/dynamic_unc/node.rrd. */
struct erg_unc_cell;
void node_unc_cell(const struct collector *c, const struct node_state *n,
                   const struct erg_grid_result *r, struct erg_unc_cell *in);
void unc_keys_scale(struct profile_rollup *r, double step);
struct erg_cell_power;
void node_write_unc(struct collector *c, struct node_state *n, int64_t t_end,
                    const struct erg_cell_power *pw);
/* The job's cluster-wide sums since ergd started (as erg_job_energy_joules_total):
 * linear sd in J and variance in J²; -1 when not known. */
int unc_job_sums(const struct collector *c, const char *job, double *sd_j, double *var_j);

/* meter_check.c: the channel's physical range; m, or checked holding m
 * without the values outside it (counted, logged once per channel); and
 * whether an interval's energy is a power inside it. */
double meter_max_watts(const struct erg_pdu_source_config *s, int ch);
const struct meter_msg *meter_check(struct collector *c, const struct meter_msg *m,
                                    struct meter_msg *checked);
bool meter_check_interval(struct collector *c, int source, int ch, uint64_t t0_ns, uint64_t t1_ns,
                          double joules);

/* durable.c: the WAL around the loop. durable_open replays what the last
 * run logged through the loop's input functions (ingest.c), handed in as
 * they log into the WAL themselves. */
typedef void (*durable_sample_fn)(struct collector *c, const uint8_t *buf, size_t len);
typedef void (*durable_meter_fn)(struct collector *c, const struct meter_msg *m);
void durable_open(struct collector *c, durable_sample_fn sample, durable_meter_fn meter);
void durable_tick(struct collector *c, int64_t now);
void durable_log_sample(struct collector *c, const uint8_t *buf, size_t len, uint64_t end_ns);
void durable_log_meter(struct collector *c, const struct meter_msg *m);
/* The gap (ns) the energy counter of source s, channel ch may bridge now. */
uint64_t durable_meter_gap(struct collector *c, int s, int ch, const struct erg_pdu_reading *r,
                           uint64_t max_gap_ns);
void durable_close(struct collector *c);

/* gpu.c: a checked sample's GPU energy: each process's (procs, parallel to
 * s->procs) and the node's board energy into its grid, per-GPU counters.
 * Returns the node's board energy (J; 0 without GPU energy readings). */
double node_gpu_sample(struct node_state *n, const Erg__Sample *s, struct erg_grid_proc *procs);
/* gpu.c: a finalised cell's GPU part of its attributed power (sh, pw as
 * erg_cell_attribute gave them), per job and for the node, into their
 * archives and /metrics; only under a model with a gpu_watts term. */
void node_gpu_cell(struct collector *c, struct node_state *n, const struct erg_grid_result *r,
                   const struct erg_attr_share *sh, const struct erg_cell_power *pw);
void node_gpu_free(struct node_state *n);

/* metrics.c */
void collector_metrics_render(struct collector *c);
void collector_metrics_asked(struct collector *c);
void collector_metrics_stop(struct collector *c);
int collector_http_dynamic(void *user, const char *url, char **body, size_t *len,
                           const char **ctype);

#endif
