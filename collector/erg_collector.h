// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd, the collector: ingest agent samples, poll meters, align both on a
 * common grid, attribute measured power, store and serve the results. */
#ifndef ERG_COLLECTOR_H
#define ERG_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erg_common.h"
#include "erg_fit.h"
#include "erg_pdu.h"

/* ---- the grid (pure; unit-tested) ---- */
#define ERG_MAX_FEEDS 8 /* outlets (feeds) of one node, e.g. dual PSUs */

/* Meter energy of one feed in one cell or lag bin, and the seconds of it
 * the feed's readings covered. */
struct erg_feed_acc {
  double joules, seconds;
  double sample_var_joules2; /* of joules, from held power samples (erg_grid_add_sample_var) */
};

struct erg_grid_key {
  const char *key; /* the process's key (ergd: a profile tuple, profile.c);
                      interned by the grid, valid until the cell is final */
  double cpu_seconds;
};

/* Per-process features the collector knows, as the journal and models
 * name them (rates per wall second over a cell). */
enum erg_feature {
  ERG_FEAT_CPU = 0,      /* cpu_seconds_per_second (always present) */
  ERG_FEAT_DISK,         /* disk_bytes_per_second: read + write */
  ERG_FEAT_INSTRUCTIONS, /* instructions_per_second */
  ERG_FEAT_CYCLES,       /* cycles_per_second */
  /* gpu_watts: GPU board energy per wall second (docs/gpu.md). A key's is
   * Σ_gpu energy x its SM share; the node's is every GPU's board energy,
   * so [system] (node - Σ keys) carries what no process used: idle GPUs
   * (their part follows the idle policy, erg_grid_gpu_idle_rate), shares
   * of processes gone or outside the scope, MIG. */
  ERG_FEAT_GPU,
  ERG_NFEATURES
};
extern const char *const erg_feature_names[ERG_NFEATURES];
/* Index of a feature name, -1 if the collector does not measure it. */
int erg_feature_index(const char *name);

/* Counters other than CPU time, parallel to erg_grid_cell.keys (kept
 * apart so erg_grid_key stays a plain {key, cpu_seconds} pair). */
struct erg_grid_key_extra {
  double disk_bytes, instructions, cycles, gpu_joules;
  /* The node's curve power (erg_grid.curve_coef) of each agent sample
   * split by the key's share of the sample's busy CPU, × the seconds of
   * the cell it covers: the key's part of the curve's energy as the load
   * moved within the cell (0 without coefficients). */
  double curve_joules;
};

struct erg_grid_cell {
  int64_t t0; /* unix seconds, multiple of step */
  double agent_seconds, busy_cpu_seconds, system_cpu_seconds;
  double disk_bytes, instructions, cycles; /* node totals: sums over processes */
  double gpu_joules;      /* the node's GPU board energy (erg_grid_add_gpu), not a sum */
  double gpu_seconds;     /* of the cell covered by GPU readings */
  double gpu_idle_joules; /* of it, GPUs without process activity (erg_grid_add_gpu) */
  unsigned seen;          /* bit 1<<erg_feature set when that counter was non-zero */
  /* The utilisation curve's tails T_i(u) of each agent sample's u (busy
   * CPU / (interval × grid ncpu)), × the seconds of the cell it covers,
   * and those seconds: the cell's mean of the tails is what a meter
   * integrates when the load changes within the cell (issue 38). */
  double tail_seconds[ERG_NDERIVED], tail_covered_seconds;
  double tail_ncpu; /* the grid ncpu of the tails' samples (the last one) */
  /* Σ over agent samples with busy CPU of their curve power × seconds
   * here: the keys' curve_joules and [system]'s (the rest) add up to it. */
  double curve_joules;
  /* The tails over windows of the meter's updates (tailwin.c), when the
   * agent sends slices and the meter's updates are seen; NULL otherwise. */
  struct erg_grid_cand *cand;
  struct erg_grid_key *keys;
  struct erg_grid_key_extra *extra; /* NULL or parallel to keys */
  uint32_t *index;                  /* grid.c: 2*cap slots, key hash -> i + 1 (0 = free) */
  size_t nkeys, cap;
};

/* One process's counters of a sample, for erg_grid_add_procs. */
struct erg_grid_proc {
  const char *key;
  double cpu_seconds, disk_bytes, instructions, cycles;
  double gpu_joules; /* Σ_gpu board energy x its SM share */
};

enum erg_cell_flags {
  ERG_CELL_NO_METER = 1, /* meter covered less than half the cell */
  ERG_CELL_NO_AGENT = 2, /* agent covered less than half the cell */
  ERG_CELL_ESTIMATED = 4,
  /* 8 is the fit's legacy idle-row flag (ERG_ROW_IDLE) */
  ERG_CELL_LAG_UNSURE = 16, /* meter data shifted by no or an uncertain lag estimate */
  /* the meter gives no active power: A x V (or VA) x the configured power
   * factor (docs/pdu.md); kept for training and attribution, marked */
  ERG_CELL_POWER_ESTIMATED = 32,
  /* measured_watts is the whole meter of the node's [group.NAME]: the
   * journal keeps it for the joint fit; attribution uses the node's share */
  ERG_CELL_SHARED = 64,
};

struct erg_grid_result {
  int64_t t0;
  unsigned step;
  double measured_watts; /* NAN when ERG_CELL_NO_METER */
  /* Variance of measured_watts from power samples held between readings
   * (W²; 0 for energy counters): Σ over feeds of their J² over their
   * seconds². */
  double sample_var_watts2;
  int flags;
  const struct erg_grid_cell *cell;
};

#define ERG_GRID_SLOTS 128
struct erg_grid {
  unsigned step;
  int nfeeds;                    /* the node's feeds (outlets); 1 after init */
  struct erg_feed_acc *feed_acc; /* [slot * nfeeds + feed], allocated at first energy */
  int64_t next_final;            /* t0 of the oldest cell not yet finalised; 0 = unset */
  struct erg_grid_cell cells[ERG_GRID_SLOTS];
  uint64_t late_seconds_dropped;   /* data for cells already finalised */
  uint64_t skipped_cells;          /* empty cells more than a ring back, never closed */
  uint64_t future_seconds_dropped; /* data too far ahead (clock skew) */
  struct grid_names *names;        /* interned keys of the open cells (grid.c) */
  double ncpu;                     /* the node's CPUs, for tail_seconds; 0: unknown (none kept) */
  /* The node model's coefficients of the curve's tails (W at T_d = 1;
   * erg_cell_model_curve) when its ncpu is the grid's: the curve's power
   * is then split by CPU share sample by sample (curve_joules); all 0: by
   * the cell's CPU shares. */
  double curve_coef[ERG_NDERIVED];
  struct erg_tailwin *tailwin; /* the tails' windows (tailwin.c); NULL until a meter update */
  /* A shared meter's member: its window is its group's (grouptail.c),
   * chosen by the members' joint fit; its own measured power is the whole
   * meter, against which a single-node fit chooses noise. The candidates
   * are kept as for any node; erg_tailwin_cell leaves its cells alone. */
  bool tailwin_group;
};

/* ---- the curve's tails over windows of the meter's updates (issue 38) ----
 * Candidate 0: the tails of the agent's slices as they came (the cell's
 * tail_seconds); over windows in phase with the meter updates ergd saw
 * (its power reading changed), no longer than a cell: 1, the slices' mean
 * tails per update (the power follows the slices, the meter shows them per
 * update); 2, the tails of each update's mean load; 3, 4, of two updates'
 * (the even and the odd pairs).
 * Every ERG_TAILWIN_EVERY usable cells the node's last ERG_TAILWIN_ROWS
 * are fitted once per candidate (erg_fit, 4 time-block folds; in a thread) and the one
 * with the lowest held-out RMSE becomes the cells' tails from then on
 * (erg_tailwin_pick). Without slices nothing changes. */
#define ERG_TAILWIN_CANDS 5
struct erg_grid_slice;
#define ERG_TAILWIN_UPDATES 64
#define ERG_TAILWIN_MIN_UPDATES 8
#define ERG_TAILWIN_ROWS 360
#define ERG_TAILWIN_MIN_ROWS 48
#define ERG_TAILWIN_EVERY 24
#define ERG_TAILWIN_MARGIN 0.02
/* The candidate to use after a choice, from each one's held-out RMSE (NaN:
 * not scored) and the one in use: of those within ERG_TAILWIN_MARGIN of the
 * best, the finest window (0, then 1, 2, then the pairs 3 and 4 alike),
 * unless the one in use is among them and no finer one is. A coarser window
 * lifts the curve's foot (Jensen) and a node's power follows its load
 * within milliseconds, so a tie is no reason to average the load further;
 * a finer one is taken on a tie, a coarser one only when clearly better.
 * -1: none scored. Pure. */
int erg_tailwin_pick(const double *rmse_watts, int current);
/* Candidate c in words ("each meter update's mean load"); "?" out of range. */
const char *erg_tailwin_what(int c);
struct erg_grid_cand {
  double tail_seconds[ERG_TAILWIN_CANDS - 1][ERG_NDERIVED];
  double covered_seconds[ERG_TAILWIN_CANDS - 1];
};
struct erg_tailwin_status {
  int chosen;                           /* candidate in use (0: the slices) */
  double window_seconds;                /* its window; 0: the slices' own */
  double update_seconds;                /* the meter's update period seen; 0: not known */
  double rmse_watts[ERG_TAILWIN_CANDS]; /* held-out RMSE at the last choice; NaN: not scored */
  unsigned choices;                     /* choices made */
};
/* The meter's power reading for the node changed between lo_ns and hi_ns
 * (load time: the reading times moved back by the lag). */
void erg_grid_meter_update(struct erg_grid *g, uint64_t lo_ns, uint64_t hi_ns);
void erg_tailwin_status(const struct erg_grid *g, struct erg_tailwin_status *st);
/* grid.c's: the slices of a sample into the windows (cells opened); a
 * cell about to be finalised (noted, the choice made, its tails replaced
 * by the chosen candidate's); the state freed. */
void erg_tailwin_add_slices(struct erg_grid *g, const struct erg_grid_slice *slices,
                            size_t nslices);
void erg_tailwin_cell(struct erg_grid *g, struct erg_grid_cell *cell, double measured_watts);
void erg_tailwin_free(struct erg_grid *g);
/* For a group's choice (grouptail.c). Candidate c's tails of a cell into
 * t[ERG_NDERIVED] (NaN: it has none, or they cover less than 90 % of what
 * the slices cover); the candidate in use's tails become the cell's (0:
 * left as they are); a choice made elsewhere (chosen, the RMSEs it was
 * made by) becomes the grid's, as its own would (no-op before the grid saw
 * a meter update). A dataset with the columns the choice's fits take: cpu
 * and disk per second, ncpu, the tails (rows: those values in that order). */
void erg_tailwin_cell_tails(const struct erg_grid_cell *cell, int c, double *t);
void erg_tailwin_apply(const struct erg_grid *g, struct erg_grid_cell *cell);
void erg_tailwin_set(struct erg_grid *g, int chosen, const double *rmse_watts);
struct erg_dataset;
int erg_tailwin_dataset(struct erg_dataset *ds, char *why, size_t whylen);
/* The choice's fits run in a thread (the loop takes the result at a later
 * cell): busy while one runs; wait joins it and takes its result now
 * (tests; a restart does without). */
bool erg_tailwin_busy(const struct erg_grid *g);
void erg_tailwin_wait(struct erg_grid *g);
/* ergd's fits (the tails' window choice, the model refit) take this lock
 * around erg_fit: its GSL handler switch is process-wide. */
void erg_fit_lock(void);
void erg_fit_unlock(void);
bool erg_fit_trylock(void); /* true: taken */
/* The choice kept for the next start (JOURNAL_DIR/NODE.tailwin). */
struct erg_tailwin_saved {
  int chosen;            /* the candidate in use */
  double update_seconds; /* the meter's update period seen then */
  int64_t chosen_s;      /* when it was chosen (unix seconds) */
};
int erg_tailwin_file_path(const char *journal_dir, const char *node, char *out, size_t outlen);
/* Written atomically. 0, or -1 with why. */
int erg_tailwin_file_write(const char *path, const struct erg_tailwin_saved *s, char *why,
                           size_t whylen);
/* 1 read, 0 no file, -1 unreadable or malformed (why says which). */
int erg_tailwin_file_read(const char *path, struct erg_tailwin_saved *s, char *why, size_t whylen);
/* The last run's choice, in use until this run's first (cells get its
 * tails once the meter's updates are seen again). */
void erg_tailwin_restore(struct erg_grid *g, const struct erg_tailwin_saved *s, uint64_t now_ns);

void erg_grid_init(struct erg_grid *g, unsigned step);
void erg_grid_free(struct erg_grid *g);
/* How many feeds (0..ERG_MAX_FEEDS) power the node; call before adding
 * energy. A cell's measured power is the sum over feeds of each feed's
 * mean power; a cell where any feed covers under half the step has none
 * (ERG_CELL_NO_METER), and so has every cell of a node with 0 feeds.
 * Returns -1 when nfeeds is out of range. */
int erg_grid_set_feeds(struct erg_grid *g, int nfeeds);
/* Opens the cells [t0, t1) overlaps without adding anything: a meter read
 * there but gave no usable energy, so the cells come (their measured power
 * missing) rather than never. */
void erg_grid_touch(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns);
/* Meter energy of feed `feed` (0..nfeeds-1) over [t0_ns, t1_ns),
 * apportioned by overlap. */
void erg_grid_add_energy(struct erg_grid *g, int feed, uint64_t t0_ns, uint64_t t1_ns,
                         double joules);
/* The variance (J²) of the energy of [t0, t1) that a held power sample
 * gave, spread over the cells it overlaps by their part of the time. */
void erg_grid_add_sample_var(struct erg_grid *g, int feed, uint64_t t0_ns, uint64_t t1_ns,
                             double var_joules2);
/* Agent counters over [t0_ns, t1_ns), apportioned by overlap. */
void erg_grid_add_sample(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                         double busy_cpu_seconds, double system_cpu_seconds,
                         const char *const *keys, const double *cpu_seconds, size_t nkeys);
/* The same with every counter of each process. */
void erg_grid_add_procs(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns, double busy_cpu_seconds,
                        double system_cpu_seconds, const struct erg_grid_proc *procs,
                        size_t nprocs);
/* The node's busy time over [t0_ns, t1_ns) within a sample (the agent's
 * sub-samples). */
struct erg_grid_slice {
  uint64_t t0_ns, t1_ns;
  double busy_cpu_seconds;
};
/* erg_grid_add_procs with the sample's busy time in slices (nslices > 0):
 * the cells' curve tails are then those of each slice's utilisation, as
 * the meter sees a load that changes within the sample; the slices are
 * taken as given (ingest checks them). */
void erg_grid_add_procs_sliced(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns,
                               double busy_cpu_seconds, double system_cpu_seconds,
                               const struct erg_grid_proc *procs, size_t nprocs,
                               const struct erg_grid_slice *slices, size_t nslices);
/* The node's GPU board energy over [t0_ns, t1_ns) (all its GPUs), and
 * of it idle_joules of the GPUs no process used (docs/gpu.md), apportioned
 * by overlap; marks the cells as having the GPU feature. */
void erg_grid_add_gpu(struct erg_grid *g, uint64_t t0_ns, uint64_t t1_ns, double joules,
                      double idle_joules);
/* Feature rates (x[ERG_NFEATURES], per wall second of a step-second cell):
 * of key i, of the node (busy CPU, counter totals, GPU board power) and of
 * [system] (node busy CPU and GPU energy not seen in any key, nothing else). */
void erg_grid_key_rates(const struct erg_grid_cell *c, size_t i, unsigned step, double *x);
void erg_grid_node_rates(const struct erg_grid_cell *c, unsigned step, double *x);
void erg_grid_system_rates(const struct erg_grid_cell *c, unsigned step, double *x);
/* The idle GPUs' part of [system]'s gpu_watts (boards no process used in
 * the cell, per-process activity measured), W; 0 without GPU readings. */
double erg_grid_gpu_idle_rate(const struct erg_grid_cell *c, unsigned step);
/* Finalises, in time order, every cell whose end + settle_seconds <= now. */
typedef void (*erg_grid_cell_fn)(void *user, const struct erg_grid_result *r);
size_t erg_grid_finalize(struct erg_grid *g, int64_t now, unsigned settle_seconds,
                         erg_grid_cell_fn fn, void *user);
/* The measured power cell t0 would get if finalised now (NaN: none). */
double erg_grid_open_watts(const struct erg_grid *g, int64_t t0);
/* The open cell starting at t0, NULL when nothing arrived for it yet. */
const struct erg_grid_cell *erg_grid_open_cell(const struct erg_grid *g, int64_t t0);

/* ---- lag estimation (pure; unit-tested) ---- */
#define ERG_LAG_BINS 512
struct erg_lag_bin {
  int64_t t;
  double cpu_seconds, disk_bytes, agent_seconds;
  double gpu_joules;      /* GPU board energy (erg_lag_add_gpu) */
  double smeared_seconds; /* meter energy spread over a longer span: no power */
};
struct erg_lag {
  struct erg_lag_bin bins[ERG_LAG_BINS];
  int nfeeds;                    /* as for the grid; 1 after init */
  struct erg_feed_acc *feed_acc; /* [bin * nfeeds + feed], allocated at first energy */
  int64_t newest;
  int lag_seconds; /* current estimate: power follows CPU this much later */
  /* Its part of a second (−0.5 … 0.5): the vertex of the parabola through
   * r at lag_seconds and its two neighbours, of the last estimate that had
   * them (0 before, and after a restart until the first): the grid moves
   * the meter data back by lag_seconds + this (erg_lag_shift_seconds). */
  double lag_fraction_seconds;
  double correlation; /* Pearson r at that lag */
  int have_estimate;
  /* Confidence of the last estimate: r at the current lag minus the best r
   * at any lag ERG_LAG_RIVAL_SECONDS or more away from it; pairs behind it. */
  double confidence;
  int pairs;
  /* Hysteresis: another lag that beat the current one, for how many
   * consecutive estimates, since which second (newest bin then). */
  int candidate, candidate_votes;
  int64_t candidate_since;
  uint64_t changes; /* switches of an established estimate */
  /* Cells overlapping [unsure_from, unsure_to] (seconds, meter time moved
   * back by the lag) were aligned with a lag that was not yet, or no
   * longer, the estimate: see erg_lag_cell_unsure. */
  int64_t unsure_from, unsure_to;
  /* The estimate came from the last run (erg_lag_restore), not yet
   * confirmed by this run's data. */
  int restored;
  /* The last window's meter energy came in spans too long to time a lag
   * (ERG_LAG_MAX_SPAN_SECONDS): a coarse counter held between its moves,
   * or polls that far apart. */
  int smeared;
  /* The meter shows the trailing mean of this many seconds of power (its
   * meters' average_seconds; 0 or 1: none). The estimator correlates the
   * power with the activity averaged the same way, so its lag is the pure
   * delay, and the grid moves the meter data back by that and the
   * average's own delay (erg_lag_shift_seconds). */
  int average_seconds;
};
/* Confidence rules of erg_lag_estimate (docs/model.md, "Meter lag"). */
#define ERG_LAG_MIN_PAIRS 30         /* paired seconds in the window */
#define ERG_LAG_MIN_R 0.5            /* Pearson r at the chosen lag */
#define ERG_LAG_RIVAL_SECONDS 2      /* neighbours closer than this are not rivals */
#define ERG_LAG_MIN_MARGIN 0.02      /* r(best) - r(best rival) */
#define ERG_LAG_SWITCH_GAIN 0.02     /* a challenger's r over the current lag's, per vote */
#define ERG_LAG_SWITCH_VOTES 3       /* consecutive votes to switch */
#define ERG_LAG_SWITCH_NOW_GAIN 0.15 /* or one estimate by this much */
#define ERG_LAG_DISK_MIN_F 10.0      /* partial F of disk bytes (or GPU power) to use them */
#define ERG_LAG_MAX_SPAN_SECONDS 2.5 /* longer meter intervals carry no 1 s timing */
void erg_lag_init(struct erg_lag *l);
/* A shared meter's members align with one estimate (the first member's,
 * from the group's summed activity): copies src's estimate and its unsure
 * span into dst, not its bins. */
void erg_lag_follow(struct erg_lag *dst, const struct erg_lag *src);
void erg_lag_free(struct erg_lag *l);
/* As erg_grid_set_feeds: a bin's power is the sum of its feeds' means. */
int erg_lag_set_feeds(struct erg_lag *l, int nfeeds);
/* CPU time and the disk bytes of the node's processes over [t0, t1). */
void erg_lag_add_activity(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double cpu_seconds,
                          double disk_bytes);
/* The node's GPU board energy over [t0, t1) (all GPUs with energy
 * readings, from the same sample as its CPU time). */
void erg_lag_add_gpu(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double joules);
void erg_lag_add_energy(struct erg_lag *l, int feed, uint64_t t0_ns, uint64_t t1_ns, double joules);
/* Re-estimates over the last window. Meter energy of intervals longer
 * than ERG_LAG_MAX_SPAN_SECONDS is left out: spread flat over 5-15 s it
 * correlates about as well at any nearby shift, and a chance peak picked a
 * lag of 7 s for a meter with none. When the window has nothing else
 * (ERG_LAG_MIN_PAIRS such seconds, too few others), l->smeared is set: the
 * lag is below what the meter resolves. The first estimate needs
 * ERG_LAG_MIN_PAIRS pairs, r >= ERG_LAG_MIN_R and a margin of
 * ERG_LAG_MIN_MARGIN over every rival lag; a different lag then replaces it
 * only after winning ERG_LAG_SWITCH_VOTES consecutive estimates by
 * ERG_LAG_SWITCH_GAIN, or one by ERG_LAG_SWITCH_NOW_GAIN. Returns 1 when
 * the estimate is set (kept or changed) this round, 0 when the data gave
 * no confident answer (the old estimate, if any, stays). */
int erg_lag_estimate(struct erg_lag *l, int max_lag_seconds, int window_seconds);
/* Lags closer than ERG_LAG_RIVAL_SECONDS: not rivals, and a switch between
 * them leaves the cells aligned with the old one sure. */
bool erg_lag_near(int a, int b);
/* How far the grid moves the meter's data back: the estimated lag (0
 * before the first) with its fraction of a second, plus
 * (average_seconds - 1) / 2, the centre of an averaging window of that
 * many 1 s bins. */
double erg_lag_shift_seconds(const struct erg_lag *l);
/* Energy j of [t0, t1) from two power readings, w0 at t0 and w1 at t1
 * (their trapezoid), as two halves [t0, *tm) and [*tm, t1), each with the
 * energy of the straight line between the readings over it: *first for
 * the first half, j - *first for the second. Point readings time the power
 * at their ends, which one flat interval would lose: a BMC read every 1-3 s
 * still times its power to the second, its halves under
 * ERG_LAG_MAX_SPAN_SECONDS. -1 (no split) when the interval is too short
 * or the powers give no line. */
int erg_power_halves(uint64_t t0_ns, uint64_t t1_ns, double w0, double w1, double j,
                     uint64_t *tm_ns, double *first);
/* A BMC's own reading time (Redfish ReadingTime, the DCMI timestamp),
 * used to place its readings in our time (docs/model.md, "Reading time").
 * Its clock is trusted only in differences: each reading is placed at its
 * reading time plus the smallest (arrival - reading time) of the last
 * ERG_READTIME_WINDOW readings, once at least ERG_READTIME_MIN_READINGS
 * are there, the BMC's clock advanced over them at least half as much as
 * ours, and their offsets agree within ERG_READTIME_MAX_SPREAD_SECONDS;
 * otherwise at its arrival. Zero the struct to start. */
#define ERG_READTIME_WINDOW 64
#define ERG_READTIME_MIN_READINGS 8
#define ERG_READTIME_MAX_SPREAD_SECONDS 8.0
struct erg_readtime {
  uint64_t arrival_ns[ERG_READTIME_WINDOW], reading_ns[ERG_READTIME_WINDOW]; /* rings */
  int n, head;
  uint64_t last_reading_ns, last_placed_ns;
  bool used;             /* the last reading was placed by its reading time */
  uint64_t placed_total; /* readings placed so */
  uint64_t stale_total;  /* answers older than one already placed (erg_readtime_stale) */
};
/* Whether a reading timed reading_ns (the BMC's clock) is older than the
 * last one placed by less than ERG_READTIME_MAX_SPREAD_SECONDS: the answer
 * to a request sent before the one that brought the newer reading (with
 * several requests in flight to a slow BMC, answers pass each other). It
 * says nothing new and is not placed (erg_readtime_place would take it for
 * a clock gone back and start over); counted in stale_total. A time further
 * back is a clock gone back, for erg_readtime_place. */
bool erg_readtime_stale(struct erg_readtime *p, uint64_t reading_ns);
/* The time to stamp a reading that arrived at arrival_ns (CLOCK_REALTIME)
 * with the BMC's reading_ns (its clock; 0: none): never after the arrival,
 * never before the last one placed. */
uint64_t erg_readtime_place(struct erg_readtime *p, uint64_t arrival_ns, uint64_t reading_ns);
/* Whether cell [t0_seconds, t0_seconds + step_seconds) was aligned with no
 * or an uncertain lag: before the first estimate (its meter data was not
 * shifted, or partly), or near a change of the estimate to a lag that is
 * not a neighbour (the window in which the challenger won, widened by both
 * lags). */
bool erg_lag_cell_unsure(const struct erg_lag *l, int64_t t0_seconds, unsigned step_seconds);
/* Whether a cell is aligned without a lag because the meter is too coarse
 * to estimate one (l->smeared, no estimate): such cells are not unsure. */
bool erg_lag_unresolved(const struct erg_lag *l);
/* Takes the last run's estimate (erg_lag_file_read) as the current one, so
 * a restarted collector aligns meter data from its first cell instead of
 * after a window of fresh data, and does not flag those cells. The first
 * confident estimate of this run confirms it, or, when another lag beats
 * it by ERG_LAG_SWITCH_GAIN, replaces it at once; every cell since the
 * start is then flagged, as before a first estimate, unless the two lags
 * are neighbours (erg_lag_near). */
void erg_lag_restore(struct erg_lag *l, int lag_seconds, double fraction_seconds,
                     double correlation, double confidence);

/* The estimate kept across restarts: one line in JOURNAL_DIR/NODE.lag
 * beside the journal whose cells it aligned. */
struct erg_lag_saved {
  int lag_seconds;
  double fraction_seconds; /* the peak's fraction of a second (-0.5 ... 0.5; 0 in older files) */
  double correlation, confidence;
  int64_t estimated_s; /* when it was written (unix seconds) */
};
int erg_lag_file_path(const char *journal_dir, const char *node, char *out, size_t outlen);
/* Written atomically (temp file + rename). 0, or -1 with why. */
int erg_lag_file_write(const char *path, const struct erg_lag_saved *s, char *why, size_t whylen);
/* 1 read, 0 no file, -1 unreadable or malformed (why says which). */
int erg_lag_file_read(const char *path, struct erg_lag_saved *s, char *why, size_t whylen);

/* ---- time a node's agent has reported (pure; unit-tested) ----
 * Disjoint ranges, oldest first. Samples may arrive out of order: after a
 * heartbeat loss the old connection's buffered samples and the new one's
 * queue reach the collector interleaved. A sample is refused only when it
 * overlaps reported time (a duplicate, or a second agent on one node). */
#define ERG_COVERAGE_MAX 16
struct erg_coverage {
  size_t n;
  uint64_t start_ns[ERG_COVERAGE_MAX], end_ns[ERG_COVERAGE_MAX];
};
/* Records [start_ns, end_ns) and returns 0, or returns -1 (nothing
 * recorded) when it overlaps reported time by more than slack_ns. Ranges
 * closer than slack_ns merge; past ERG_COVERAGE_MAX the oldest is forgotten. */
int erg_coverage_claim(struct erg_coverage *c, uint64_t start_ns, uint64_t end_ns,
                       uint64_t slack_ns);

/* ---- attribution of a finalised cell, with or without a node model ---- */
#define ERG_ATTR_KINDS 5 /* profile key kinds with intervals per share */
struct erg_attr_share {
  const char *key;
  double watts;
  /* The uncertainty in the cell of each kind's key of the row
   * (docs/model.md, "Uncertainty"; kinds in the collector's profile order:
   * command, job, unit, container, user): the rows of one key value — and
   * those without a value of that kind, and [system] alone — are one group,
   * whose sd (adds linearly over cells) and variance (adds) are on its
   * first row and 0 on its others, so a sum over a key's rows is its own. */
  double key_sd_watts[ERG_ATTR_KINDS], key_var_watts2[ERG_ATTR_KINDS];
};
struct erg_model;
struct erg_unc_cell;
struct erg_cell_model {
  const struct erg_model *model; /* NULL: CPU share of measured − idle_watts (policy applies) */
  const int *feature_map;        /* model feature k -> erg_feature, -1 unknown (x = 0),
                                    ERG_NFEATURES + d: derived feature d (erg_derived) */
  int idle_policy;               /* enum erg_idle_policy */
  /* What is known of the cell's power (cells.c, uncertainty.c); NULL: no
   * uncertainty computed (key_sd_watts, key_var_watts2 stay 0). */
  const struct erg_unc_cell *unc;
};
/* The model's index of gpu_watts when its coefficient is positive (and
 * finite), else -1: without one the GPU part of the power is not known. */
int erg_cell_model_gpu(const struct erg_cell_model *cm);
/* The model's coefficients of the curve's tails T_d (d < ERG_NDERIVED)
 * into coef, for a grid of ncpu CPUs; all 0 without a model, without the
 * curve, or when the model was fitted for another CPU count. */
void erg_cell_model_curve(const struct erg_cell_model *cm, double ncpu, double coef[ERG_NDERIVED]);
struct erg_cell_power {
  double total_watts;         /* measured, or the model's prediction when estimated */
  double idle_watts;          /* idle part of total_watts */
  double dynamic_watts;       /* total − idle */
  double idle_separate_watts; /* idle given to nobody (policy separate) */
  double modelled_watts;      /* model prediction from the node's features; NAN if none */
  double gpu_idle_watts;      /* of idle_watts, the idle GPUs' board term (docs/gpu.md) */
  bool estimated;             /* no meter reading: total is the prediction */
  /* With cm->unc: the uncertainty of dynamic_watts (docs/model.md,
   * "Uncertainty"): its correlated sd (W, adds linearly over cells) and
   * independent variance (W², adds); 0 without. */
  double dynamic_sd_watts, dynamic_var_watts2;
  /* A node feature beyond the model's training maximum (the node's
   * utilisation for the curve): linear terms went on linearly, the curve
   * with its end slope. Which feature, its value and its maximum. */
  bool beyond_training;
  char beyond_feature[64];
  double beyond_value, beyond_training_max;
};
/* Fills shares[0..nkeys] (keys, then "[system]") so that
 * idle_separate_watts + Σ shares == total_watts. Returns 0 when attributed,
 * 1 when the cell has no power to attribute (no meter reading and no model
 * or no agent data), -1 on allocation failure. */
int erg_cell_attribute(const struct erg_cell_model *cm, double idle_watts,
                       const struct erg_grid_result *r, struct erg_attr_share *shares,
                       struct erg_cell_power *out);
/* The model's node-level prediction for an open or final cell (a node's
 * share of a shared meter); NaN without a model or cell. */
double erg_cell_predict(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                        unsigned step);
/* The model's node-level feature values of the cell into x (model order,
 * ERG_FIT_MAX_FEATURES room): what erg_cell_predict weighs; returns how
 * many (0 without a model or cell). */
size_t erg_cell_model_x(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                        unsigned step, double *x);
/* The variance (W²) of the cell's predicted dynamic power Σ β_k x_k from
 * the model's coefficient covariance (the idle's row left out); 0 without
 * a covariance, NAN without a model or cell. */
double erg_cell_predict_var(const struct erg_cell_model *cm, const struct erg_grid_cell *c,
                            unsigned step);
/* The no-model attribution: shares[0..nkeys] (keys, then "[system]") by
 * CPU-time share of measured − idle_watts (all of it to [system] when no
 * CPU time was seen), idle by idle_policy (enum erg_idle_policy), through
 * erg_attribute_cell with a CPU-only pseudo-model. Conserves:
 * idle_separate_watts + Σ shares == measured. Returns 0, 1 when measured
 * is not finite, -1 on allocation failure. */
int erg_attribute_cpu_share(const struct erg_grid_cell *c, double measured_watts, double idle_watts,
                            int idle_policy, struct erg_attr_share *shares,
                            struct erg_cell_power *out);

/* ---- training journal (CSV, docs/model.md) ---- */
struct erg_journal_row {
  int64_t t0; /* cell start, unix seconds */
  unsigned step_seconds;
  double measured_watts;         /* NAN when missing */
  int flags;                     /* erg_cell_flags */
  double cpu_seconds_per_second; /* node busy CPU time per wall second */
  double disk_bytes_per_second, instructions_per_second, cycles_per_second;
  double gpu_watts; /* NAN: the cell had no GPU readings (written "nan") */
  unsigned columns; /* bits 1<<erg_feature of optional columns to write, ERG_JOURNAL_TAILS */
  unsigned ncpu;    /* node CPUs as the agent reports them; 0 unknown */
  /* The node's meter shows a trailing mean of this many seconds (its
   * average_seconds; 0 or 1: none): written in the file's header, for the
   * fit to smooth the features alike (docs/model.md, "Averaging meters");
   * another value starts a new file. */
  unsigned average_seconds;
  /* With ERG_JOURNAL_TAILS: the cell's mean of its samples' curve tails,
   * node_cpu_utilization_tail8_1 … 8 (NAN: no sample in the cell). */
  double tails[ERG_NDERIVED];
};
/* columns bit: the curve's tails as cell means (docs/model.md, "Journal"). */
#define ERG_JOURNAL_TAILS (1u << 16)
int erg_journal_path(const char *dir, const char *node, char *out, size_t outlen);
/* Appends one row, rotating the file first when it reached max_bytes or
 * its first row is max_age_seconds older than this one (0: no limit). */
int erg_journal_append(const char *dir, const char *node, const struct erg_journal_row *r,
                       long max_bytes, long max_age_seconds, char *why, size_t whylen);
/* What the last append learnt of the node's current file (its inode, the
 * columns of its header, its first row's time), so the next append of the
 * same columns need not read the header again: ergd appends a row per node
 * per cell on its loop, and on a cold cache each header read is a disk
 * read. Zeroed: nothing known yet. */
struct erg_journal_file {
  unsigned long long ino;
  unsigned columns;
  unsigned average_seconds;
  int64_t first_t;
  int valid;
};
int erg_journal_append_cached(const char *dir, const char *node, const struct erg_journal_row *r,
                              long max_bytes, long max_age_seconds, struct erg_journal_file *known,
                              char *why, size_t whylen);
/* Optional columns (bits 1<<erg_feature) of the node's current journal
 * file, 0 when there is none: a restart keeps writing the same columns. */
unsigned erg_journal_columns(const char *dir, const char *node);
/* End (t0 + step, unix seconds) of the node's last journal row, 0 if none;
 * reads the file's tail only. */
int64_t erg_journal_last_end(const char *dir, const char *node);
/* The same among the rows ending by max_end; *ignored is the latest end of
 * the rows after it (0 none). A row beyond now + ERG_JOURNAL_FUTURE_SECONDS
 * (a clock that was set ahead, a damaged or forged file) is no resume
 * point: resuming after it, ergd wrote nothing until that time came. */
#define ERG_JOURNAL_FUTURE_SECONDS 600
int64_t erg_journal_last_end_by(const char *dir, const char *node, int64_t max_end,
                                int64_t *ignored);
/* The highest measured power among the last rows of the node's journal
 * (the tail of its current file, else of NODE.csv.1); NAN when none. */
double erg_journal_measured_max(const char *dir, const char *node);
/* Moves the node's journal to NODE.csv.1 (and the older ones on): the next
 * row starts a file. */
int erg_journal_rotate(const char *dir, const char *node);

/* ---- configuration ---- */
#define ERG_MAX_SOURCES 16384 /* a BMC per node: ERG_MAX_NODES */
#define ERG_MAX_NODES 16384   /* per collector; 5,000 are benchmarked (docs/scale.md) */

struct erg_node_feed {
  int source;    /* index into sources */
  int channel;   /* index into that source's channel list */
  double factor; /* share of the outlet that feeds this node; -1: a term
                    subtracted from a residual meter ("- pdu-a:outlet:1") */
};

struct erg_node_config {
  char name[128];
  double idle_watts; /* NAN: collector default */
  /* A group member's feeds are its group's: the whole shared meter, split
   * per cell by the members' models (docs/config.md, [group.NAME]). */
  struct erg_node_feed feeds[ERG_MAX_FEEDS];
  int nfeeds;
  int group; /* index into groups, -1: the node's own power */
};

/* [group.NAME]: nodes behind one meter (a bank, an inlet, a residual). */
#define ERG_MAX_GROUP_NODES 64
struct erg_group_config {
  char name[128];
  struct erg_node_feed feeds[ERG_MAX_FEEDS];
  int nfeeds;
  int members[ERG_MAX_GROUP_NODES]; /* node indices, in the order of `nodes` */
  int nmembers;
};

struct erg_collector_config {
  char listen[256]; /* ZeroMQ endpoint for agents */
  char http[128];   /* "127.0.0.1:9710"; "" disables */
  /* The HTTP server's limits (struct erg_web_server_limits, docs/web.md). */
  unsigned http_max_connections, http_max_connections_per_address;
  double http_header_timeout_seconds, http_request_timeout_seconds;
  char data_dir[512];
  char www_dir[512];
  char rrdcached[256]; /* rrdcached address; "": RRDCACHED_ADDRESS or none */
  unsigned step_seconds;
  unsigned settle_steps;
  double poll_seconds;
  /* driver = ipmi meters share this many poll threads (libfreeipmi
   * blocks: each takes one BMC at a time); 0: four per IPMI meter (reading ahead) up to 64.
   * A round of n BMCs that answer in a seconds fits poll_seconds while
   * threads >= n x a / poll_seconds (docs/scale.md). */
  unsigned ipmi_poll_threads;
  double idle_watts;
  unsigned top_processes;
  double page_interval_seconds;
  double page_timeout_seconds; /* a render taking longer is killed */
  long journal_max_bytes;
  long journal_max_age_seconds;    /* rotate a file this much older than its first row; 0: never */
  long key_expire_seconds;         /* idle per-node key archives deleted; 0: never */
  long cluster_key_expire_seconds; /* same for cluster/<kind>/ (job history); 0: never */
  unsigned key_archives_max;       /* per node and kind, 0: derived (see below) */
  double key_min_share;            /* a new key needs this share of a cell for an archive */
  unsigned lag_max_seconds;        /* 0: no lag estimation/compensation */
  unsigned lag_window_seconds;
  char curve_secret_key_file[512]; /* set: agents must use CURVE */
  char authorized_keys_file[512];  /* agents' public keys, one per line */
  int log_level;
  char model_dir[512];             /* "": DATA_DIR/models */
  char page_format[8];             /* graphs: "png" (default) or "svg" */
  int idle_policy;                 /* enum erg_idle_policy */
  unsigned refit_interval_seconds; /* 0: no scheduled refit */
  bool wal;                        /* write-ahead log of unfinalised inputs */
  bool wal_fsync;                  /* fdatasync it once a second (power loss) */
  bool energy_intervals;           /* per-job and node-dynamic 95 % intervals (uncertainty.c) */
  char wal_dir[512];               /* "": DATA_DIR/wal */
  long wal_max_bytes;
  /* Nodes without a [node.NAME] section that may have archives; new
   * ones beyond are refused (nodes.c). */
  unsigned max_unconfigured_nodes;
  /* Days new archives keep at step, 1 min, 1 h, 1 day resolution (0: none). */
  double archive_days[4];
  struct erg_pdu_source_config *sources;
  int nsources;
  struct erg_node_config *nodes;
  int nnodes;
  struct erg_group_config *groups;
  int ngroups;
};

void erg_collector_config_defaults(struct erg_collector_config *c);
/* Key archives allowed per node and kind: key_archives_max, or when unset
 * max(64, 4 x top_processes). */
unsigned erg_collector_key_archives_max(const struct erg_collector_config *c);
int erg_collector_config_load(const char *path, struct erg_collector_config *c,
                              struct erg_config_error *err);
void erg_collector_config_free(struct erg_collector_config *c);

/* Runs until *stop becomes non-zero. Returns 0 on clean exit. */
int erg_collector_run(const struct erg_collector_config *cfg, volatile int *stop);

#endif
