/* ergd, the collector: ingest agent samples, poll meters, align both on a
 * common grid, attribute measured power, store and serve the results. */
#ifndef ERG_COLLECTOR_H
#define ERG_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erg_common.h"
#include "erg_pdu.h"

/* ---- the grid (pure; unit-tested) ---- */
struct erg_grid_key {
  char key[64];          /* command name as the agent sent it (raw) */
  double cpu_seconds;
};

struct erg_grid_cell {
  int64_t t0;            /* unix seconds, multiple of step */
  double meter_joules, meter_seconds;
  double agent_seconds, busy_cpu_seconds, system_cpu_seconds;
  struct erg_grid_key *keys;
  size_t nkeys, cap;
};

enum erg_cell_flags {
  ERG_CELL_NO_METER = 1,   /* meter covered less than half the cell */
  ERG_CELL_NO_AGENT = 2,   /* agent covered less than half the cell */
  ERG_CELL_ESTIMATED = 4,
};

struct erg_grid_result {
  int64_t t0;
  unsigned step;
  double measured_watts;   /* NAN when ERG_CELL_NO_METER */
  int flags;
  const struct erg_grid_cell *cell;
};

#define ERG_GRID_SLOTS 128
struct erg_grid {
  unsigned step;
  int64_t next_final;      /* t0 of the oldest cell not yet finalised; 0 = unset */
  struct erg_grid_cell cells[ERG_GRID_SLOTS];
  uint64_t late_seconds_dropped;   /* data for cells already finalised */
  uint64_t future_seconds_dropped; /* data too far ahead (clock skew) */
};

void erg_grid_init(struct erg_grid *g, unsigned step);
void erg_grid_free(struct erg_grid *g);
/* Meter energy measured over [t0_ns, t1_ns), apportioned by overlap. */
void erg_grid_add_energy(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns, double joules);
/* Agent counters over [t0_ns, t1_ns), apportioned by overlap. */
void erg_grid_add_sample(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                         double busy_cpu_seconds, double system_cpu_seconds,
                         const char *const *keys, const double *cpu_seconds, size_t nkeys);
/* Finalises, in time order, every cell whose end + settle_seconds <= now. */
typedef void (*erg_grid_cell_fn)(void *user, const struct erg_grid_result *r);
size_t erg_grid_finalize(struct erg_grid *g, int64_t now, unsigned settle_seconds,
                         erg_grid_cell_fn fn, void *user);

/* ---- lag estimation (pure; unit-tested) ---- */
#define ERG_LAG_BINS 512
struct erg_lag_bin {
  int64_t t;
  double cpu_seconds, agent_seconds, joules, meter_seconds;
};
struct erg_lag {
  struct erg_lag_bin bins[ERG_LAG_BINS];
  int64_t newest;
  int lag_seconds;         /* current estimate: power follows CPU this much later */
  double correlation;      /* Pearson r at that lag */
  int have_estimate;
};
void erg_lag_init(struct erg_lag *l);
void erg_lag_add_cpu(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double cpu_seconds);
void erg_lag_add_energy(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double joules);
/* Re-estimates over the last window; returns 1 if the estimate was set. */
int erg_lag_estimate(struct erg_lag *l, int max_lag_seconds, int window_seconds);

/* ---- attribution (thin: CPU-time share of measured - idle) ---- */
struct erg_attr_share {
  const char *key;
  double watts;
};
/* Fills shares[0..n) for the cell's keys plus "[system]" at index nkeys;
 * returns idle watts. Conserves: idle + sum(shares) == measured. */
double erg_attribute_cpu_share(const struct erg_grid_cell *c, double measured_watts,
                               double idle_watts, struct erg_attr_share *shares);

/* ---- training journal (CSV, docs/model.md) ---- */
struct erg_journal_row {
  int64_t t0;                     /* cell start, unix seconds */
  unsigned step_seconds;
  double measured_watts;          /* NAN when missing */
  int flags;                      /* erg_cell_flags */
  double cpu_seconds_per_second;  /* node busy CPU time per wall second */
};
int erg_journal_path(const char *dir, const char *node, char *out, size_t outlen);
/* Appends one row, rotating the file first when it reached max_bytes. */
int erg_journal_append(const char *dir, const char *node, const struct erg_journal_row *r,
                       long max_bytes, char *why, size_t whylen);

/* ---- configuration ---- */
#define ERG_MAX_SOURCES 512
#define ERG_MAX_NODES 4096
#define ERG_MAX_FEEDS 8

struct erg_node_feed {
  int source;            /* index into sources */
  int channel;           /* index into that source's channel list */
  double factor;         /* share of the outlet that feeds this node */
};

struct erg_node_config {
  char name[128];
  double idle_watts;     /* NAN: collector default */
  struct erg_node_feed feeds[ERG_MAX_FEEDS];
  int nfeeds;
};

struct erg_collector_config {
  char listen[256];      /* ZeroMQ endpoint for agents */
  char http[128];        /* "127.0.0.1:9710"; "" disables */
  char data_dir[512];
  char www_dir[512];
  unsigned step_seconds;
  unsigned settle_steps;
  double poll_seconds;
  double idle_watts;
  unsigned top_processes;
  double page_interval_seconds;
  long journal_max_bytes;
  unsigned lag_max_seconds;         /* 0: no lag estimation/compensation */
  unsigned lag_window_seconds;
  char curve_secret_key_file[512];  /* set: agents must use CURVE */
  char authorized_keys_file[512];   /* agents' public keys, one per line */
  int log_level;
  struct erg_pdu_source_config *sources;
  int nsources;
  struct erg_node_config *nodes;
  int nnodes;
};

void erg_collector_config_defaults(struct erg_collector_config *c);
int erg_collector_config_load(const char *path, struct erg_collector_config *c,
                              struct erg_config_error *err);
void erg_collector_config_free(struct erg_collector_config *c);

/* Runs until *stop becomes non-zero. Returns 0 on clean exit. */
int erg_collector_run(const struct erg_collector_config *cfg, volatile int *stop);

#endif
