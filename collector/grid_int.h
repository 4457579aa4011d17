// SPDX-License-Identifier: GPL-3.0-or-later
/* The grid's ring, shared by grid.c, tailwin.c (which writes candidate
 * tails into open cells) and grouptail.c (which gives a group's members'
 * open cells their window) as inlines, so that no file calls another back. */
#ifndef ERG_GRID_INT_H
#define ERG_GRID_INT_H

#include <stddef.h>
#include <stdint.h>

#include "erg_collector.h"

static inline size_t grid_slot(const struct erg_grid *g, int64_t t0) {
  return (size_t)((t0 / g->step) % ERG_GRID_SLOTS);
}

/* The open (not final) cell starting at t0, NULL when none is. */
static inline struct erg_grid_cell *grid_open_cell(struct erg_grid *g, int64_t t0) {
  if (t0 < 0 || g->step == 0 || t0 < g->next_final)
    return NULL;
  struct erg_grid_cell *c = &g->cells[grid_slot(g, t0)];
  return c->t0 == t0 ? c : NULL;
}

#endif
