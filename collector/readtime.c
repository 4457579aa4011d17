// SPDX-License-Identifier: GPL-3.0-or-later
/* Placing a BMC's readings by its own reading time (erg_collector.h,
 * docs/model.md "Meter lag", "Reading time"). A BMC's clock may be off
 * ours by seconds to hours, so its times are used only through
 * differences: d = arrival - reading time of each reading is its clock's
 * offset plus how old the reading was when it arrived; the smallest d of
 * the recent readings is the offset plus the age of the freshest answer,
 * and each reading is placed at its reading time + that: the answers'
 * varying delays are taken out, a constant age is left to the lag
 * estimator. Not trusted blindly: the reading times must advance with
 * ours and the offsets agree, else a reading stays at its arrival. */
#include <string.h>

#include "erg_collector.h"

uint64_t erg_readtime_place(struct erg_readtime *p, uint64_t arrival_ns, uint64_t reading_ns) {
  uint64_t placed = arrival_ns;
  bool used = false;
  if (!reading_ns || !arrival_ns || reading_ns < p->last_reading_ns) {
    p->n = p->head = 0; /* none, or the BMC's clock went back: start over */
  } else {
    p->arrival_ns[p->head] = arrival_ns;
    p->reading_ns[p->head] = reading_ns;
    p->head = (p->head + 1) % ERG_READTIME_WINDOW;
    if (p->n < ERG_READTIME_WINDOW)
      p->n++;
    int oldest = (p->head + ERG_READTIME_WINDOW - p->n) % ERG_READTIME_WINDOW;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < p->n; i++) {
      int64_t d = (int64_t)(p->arrival_ns[i] - p->reading_ns[i]);
      lo = d < lo ? d : lo;
      hi = d > hi ? d : hi;
    }
    /* Sane: enough readings; the BMC's clock advanced over them at least
     * half as much as ours (one that stands still, a recording's fixed
     * time, never does); their offsets agree (a stepped clock, or answers
     * far later than the others, spread them). */
    double ours = (double)(arrival_ns - p->arrival_ns[oldest]) / 1e9;
    double its = (double)(reading_ns - p->reading_ns[oldest]) / 1e9;
    if (p->n >= ERG_READTIME_MIN_READINGS && ours > 0 && its >= 0.5 * ours &&
        (double)(hi - lo) / 1e9 <= ERG_READTIME_MAX_SPREAD_SECONDS) {
      placed = (uint64_t)((int64_t)reading_ns + lo);
      used = true;
    }
  }
  if (placed > arrival_ns)
    placed = arrival_ns; /* never after it came (lo is at most this d) */
  if (placed < p->last_placed_ns)
    placed = p->last_placed_ns; /* in order: an interval never runs back */
  p->last_reading_ns = reading_ns;
  p->last_placed_ns = placed;
  p->used = used;
  p->placed_total += used;
  return placed;
}

bool erg_readtime_stale(struct erg_readtime *p, uint64_t reading_ns) {
  if (!reading_ns || !p->last_reading_ns || reading_ns >= p->last_reading_ns ||
      (double)(p->last_reading_ns - reading_ns) / 1e9 > ERG_READTIME_MAX_SPREAD_SECONDS)
    return false;
  p->stale_total++;
  return true;
}
