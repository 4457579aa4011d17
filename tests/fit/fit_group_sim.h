// SPDX-License-Identifier: GPL-3.0-or-later
/* Shared by the group fit tests (test_fit_group.c: the library's joint fit;
 * test_fit_group_cli.c: `erg fit --group`): four nodes behind one meter,
 * each with its own truth, and ROWS cells of their loads. */
#ifndef FIT_GROUP_SIM_H
#define FIT_GROUP_SIM_H

#include <stdbool.h>

#include "erg_fit.h"

#define N 4
#define T0 1763700000.0
#define ROWS 1600

extern const char *const nodes[N];
/* Different truth per member: idle, CPUs, curve (amplitude at full load,
 * exponent: linear, convex, concave, steep) and disk cost. */
extern const double idle_w[N], ncpu[N], amp_w[N], expo[N], disk_w[N];

/* Member n's power at utilisation u and disk B/s. */
double truth(size_t n, double u, double disk);

struct group_data {
  struct erg_dataset ds[N];
  double *truth[N]; /* each member's noise-free power per row */
};

/* ROWS cells of every member: own load schedule each (levels held for 1-6
 * cells) or, when correlated, one schedule for all; independent disk
 * bursts; the meter is the sum of the truths + 1 W noise, flag 64. */
void make_group(struct group_data *g, bool correlated, unsigned long seed);
void free_group(struct group_data *g);
/* The members' true idle, as idle profiles of 24 cells. */
void true_profiles(struct erg_idle_profile *p);

#endif
