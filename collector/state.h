/* ergd's loop state, shared by collector.c (the loop) and metrics.c (the
 * /metrics body). Everything here belongs to the loop thread, except the
 * rendered metrics bodies (metrics_lock). */
#ifndef ERG_COLLECTOR_STATE_H
#define ERG_COLLECTOR_STATE_H

#include <pthread.h>

#include "collector_int.h"

/* Known cluster-wide jobs (per node and kind: key_archives_max). */
#define CLUSTER_MAX_KNOWN_JOBS 4096
/* How long an absent cluster-wide job still gets 0 W written. */
#define CLUSTER_JOB_ZERO_SECONDS 3600

struct node_state {
  char name[128];
  double idle_watts;
  struct erg_grid grid;
  uint64_t samples, dropped_samples, last_seen_ns;
  uint64_t overlap_samples;   /* refused: time already covered by this node */
  /* The agent's eBPF health (Sample.bpf), summed; has_bpf once one came. */
  int has_bpf;
  uint64_t bpf_map_full_drops, bpf_lost_exit_ns, bpf_unseen_switches, bpf_unsettled;
  struct erg_coverage covered; /* time of the accepted samples */
  char boot_id[40];
  double last_measured_watts, last_idle_watts, last_modelled_watts;
  double lag_seconds, lag_correlation;  /* for /metrics; NAN until estimated */
  /* Energy over the cells so far (this run), for /metrics counters. */
  double measured_joules, idle_joules, dynamic_joules, unattributed_joules;
  struct erg_lag lag;
  struct profile_known known[PROFILE_NKINDS];
  int known_loaded;           /* known[] read back from the store (restarts) */
  int has_data;
  struct node_model *model;   /* never NULL after collector_node */
  unsigned journal_columns;   /* optional journal columns: sticky once seen */
  unsigned ncpu;              /* from the agent's NodeTotals; 0 until seen */
};

struct source_state {
  struct erg_pdu_counter counters[ERG_PDU_MAX_CHANNELS];
  uint64_t polls, errors;
  double poll_seconds;    /* duration of the last poll (once polls > 0) */
  int failing;
};

struct collector {
  const struct erg_collector_config *cfg;
  struct node_state **nodes;
  size_t nnodes;
  struct node_state **node_index; /* open addressing by name hash */
  size_t node_index_len;          /* power of two > 2 * ERG_MAX_NODES */
  struct source_state *sources;
  struct feed_index *feeds;  /* meter channel -> node feeds */
  struct erg_store *store;
  struct writer *writer;  /* all archive writes go through its thread */
  struct renderer *renderer; /* pages, in their own thread */
  struct cluster *cluster;
  struct profile_known cluster_jobs;
  int cluster_jobs_loaded;
  struct auth *auth;      /* NULL: plain TCP, no CURVE */
  char journal_dir[600];
  uint64_t msgs_ok, msgs_rejected, nodes_refused, store_errors;
  uint64_t keys_evicted;  /* per-node key archives removed to stay under the cap */
  int64_t last_render;
  int render_due;
  int keys_dirty;         /* key counters changed since the keys section was rendered */
  /* Scratch for one sample's processes and their tuple keys. */
  struct erg_grid_proc *procbuf;
  char *keybuf;
  size_t procbuf_cap;
  pthread_mutex_t metrics_lock;
  char *metrics;          /* last rendered /metrics body: cheap part, every second */
  size_t metrics_len;
  char *metrics_keys;     /* per-key counters, rendered when keys_dirty */
  size_t metrics_keys_len;
};

/* metrics.c */
void collector_metrics_render(struct collector *c);
int collector_http_dynamic(void *user, const char *url, char **body, size_t *len,
                           const char **ctype);

#endif
