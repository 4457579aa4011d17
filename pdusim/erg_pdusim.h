/* erg-pdusim: a SIMULATED energy meter / PDU for demos and tests. Its power
 * follows the real CPU load of this machine (or of given cgroups, one per
 * virtual node) through a configurable model. */
#ifndef ERG_PDUSIM_H
#define ERG_PDUSIM_H

#include <stdint.h>

struct erg_pdusim_model {
  double idle_watts;     /* power at zero load */
  double slope_watts;    /* extra power at full load (all CPUs busy) */
  double exponent;       /* P = idle + slope * util^exponent */
  double noise_watts;    /* standard deviation of Gaussian noise */
  double quantum_watts;  /* readings are rounded to this (0 = off) */
  double update_seconds; /* the meter refreshes its value this often */
  double lag_seconds;    /* power follows load this much later */
};

void erg_pdusim_model_defaults(struct erg_pdusim_model *m);
/* The model's power for a utilisation in [0,1] and one standard-normal
 * noise draw z; never negative. */
double erg_pdusim_model_watts(const struct erg_pdusim_model *m, double util, double z);

/* Utilisation sources. */
struct erg_pdusim_load {
  char cgroup[256];      /* "" = whole machine via /proc/stat */
  uint64_t prev_busy_us, prev_total_us;
  uint64_t prev_t_ns;
  int primed;
};
/* Fraction of all CPUs' capacity used since the previous call, in [0,1]. */
double erg_pdusim_load_sample(struct erg_pdusim_load *l, unsigned ncpu);

#endif
