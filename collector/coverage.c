// SPDX-License-Identifier: GPL-3.0-or-later
/* Which time a node's agent has reported: a handful of disjoint ranges, so
 * a late sample that fills a gap is taken and one that repeats reported
 * time is not (erg_collector.h). */
#include <string.h>

#include "erg_collector.h"

static uint64_t u64_min(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t u64_max(uint64_t a, uint64_t b) { return a > b ? a : b; }

static void coverage_remove(struct erg_coverage *c, size_t i) {
  memmove(&c->start_ns[i], &c->start_ns[i + 1], (c->n - i - 1) * sizeof c->start_ns[0]);
  memmove(&c->end_ns[i], &c->end_ns[i + 1], (c->n - i - 1) * sizeof c->end_ns[0]);
  c->n--;
}

/* Merges range i with its successors while they touch (within slack). */
static void coverage_merge(struct erg_coverage *c, size_t i, uint64_t slack_ns) {
  while (i + 1 < c->n && c->start_ns[i + 1] <= c->end_ns[i] + slack_ns) {
    c->end_ns[i] = u64_max(c->end_ns[i], c->end_ns[i + 1]);
    coverage_remove(c, i + 1);
  }
}

int erg_coverage_claim(struct erg_coverage *c, uint64_t start_ns, uint64_t end_ns,
                       uint64_t slack_ns) {
  size_t i = 0;
  if (end_ns < start_ns)
    return -1;
  for (size_t k = 0; k < c->n; k++) {
    uint64_t lo = u64_max(start_ns, c->start_ns[k]), hi = u64_min(end_ns, c->end_ns[k]);
    if (hi > lo && hi - lo > slack_ns)
      return -1;
  }
  while (i < c->n && c->start_ns[i] <= start_ns)
    i++;
  /* Full: the oldest range goes (its time is far behind the grid's window
   * by then); a sample older than every range is taken as a gap filler. */
  if (c->n == ERG_COVERAGE_MAX) {
    coverage_remove(c, 0);
    if (i > 0)
      i--;
  }
  memmove(&c->start_ns[i + 1], &c->start_ns[i], (c->n - i) * sizeof c->start_ns[0]);
  memmove(&c->end_ns[i + 1], &c->end_ns[i], (c->n - i) * sizeof c->end_ns[0]);
  c->start_ns[i] = start_ns;
  c->end_ns[i] = end_ns;
  c->n++;
  coverage_merge(c, i > 0 ? i - 1 : 0, slack_ns);
  if (i < c->n)
    coverage_merge(c, i, slack_ns);
  return 0;
}
