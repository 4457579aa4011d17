// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-pdusim: a SIMULATED energy meter / PDU for demos and tests. Its power
 * follows the real CPU load of this machine (or of given cgroups, one per
 * virtual node) through a configurable model. */
#ifndef ERG_PDUSIM_H
#define ERG_PDUSIM_H

#include <stddef.h>
#include <stdint.h>

#define ERG_PDUSIM_CURVE_MAX 32

struct erg_pdusim_model {
  double idle_watts;     /* power at zero load */
  double slope_watts;    /* extra power at full load (all CPUs busy) */
  double exponent;       /* P = idle + slope * util^exponent */
  double noise_watts;    /* standard deviation of Gaussian noise */
  double quantum_watts;  /* readings are rounded to this (0 = off) */
  double update_seconds; /* the meter refreshes its value this often */
  double lag_seconds;    /* power follows load this much later */
  /* --disk-watts-per-mbps: a linear disk cost, W per MB/s (1e6 B/s) of
   * block I/O of the node's cgroup (0 = off). */
  double disk_watts_per_mbps;
  /* --curve: power from a table instead of idle/slope/exponent, linear
   * between points; loads ascending in [0, 1]. */
  int ncurve;
  double curve_load[ERG_PDUSIM_CURVE_MAX], curve_watts[ERG_PDUSIM_CURVE_MAX];
  char curve_name[160]; /* where the curve came from, for the banner */
};

void erg_pdusim_model_defaults(struct erg_pdusim_model *m);
/* The model's power for a utilisation in [0,1], a block I/O rate and one
 * standard-normal noise draw z; never negative. */
double erg_pdusim_model_watts(const struct erg_pdusim_model *m, double util,
                              double disk_bytes_per_second, double z);
/* The same before quantisation (may be negative with noise): a shared
 * meter adds its nodes' raw powers and rounds the sum once. */
double erg_pdusim_model_raw_watts(const struct erg_pdusim_model *m, double util,
                                  double disk_bytes_per_second, double z);
/* w rounded to quantum_watts (0: as is), never negative. */
double erg_pdusim_quantise(double w, double quantum_watts);

/* Loads a curve into m: a file of "load_fraction watts" lines (comma or
 * blanks between, '#' comments), or "specpower:ROW" for row ROW (the
 * first, index column) of a SPECpower_ssj2008 CSV (ActiveIdle = load 0,
 * 10_AvgPower .. 100_AvgPower = 0.1 .. 1). -1 with a reason on error. */
int erg_pdusim_curve_load(struct erg_pdusim_model *m, const char *spec, const char *specpower_csv,
                          char *why, size_t whylen);
/* The curve at util (clamped to its ends), linear between points. */
double erg_pdusim_curve_watts(const struct erg_pdusim_model *m, double util);

/* Utilisation sources. */
struct erg_pdusim_load {
  char cgroup[256]; /* "" = whole machine via /proc/stat */
  uint64_t prev_busy_us, prev_total_us;
  uint64_t prev_t_ns;
  int primed;
};
/* Fraction of all CPUs' capacity used since the previous call, in [0,1]. */
double erg_pdusim_load_sample(struct erg_pdusim_load *l, unsigned ncpu);

/* Block I/O bytes (read + write) of a cgroup, cumulative: io.stat, else the
 * group's processes' /proc/PID/io (see pdusim/io.c). */
#define ERG_PDUSIM_IO_PIDS 1024
struct erg_pdusim_io {
  long pid[ERG_PDUSIM_IO_PIDS];
  uint64_t bytes[ERG_PDUSIM_IO_PIDS];
  unsigned pass[ERG_PDUSIM_IO_PIDS];
  int npids;
  unsigned passes;
  uint64_t gone_bytes; /* of processes that have left */
};
/* cgroup: path below /sys/fs/cgroup, as for --node. */
uint64_t erg_pdusim_io_bytes(struct erg_pdusim_io *io, const char *cgroup);

#endif
