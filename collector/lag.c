/* Lag between a node's activity and its meter's reading. PDUs average and
 * refresh their values late; the grid must shift meter data back by that
 * delay or the attribution of every cell is smeared. We keep 1 s bins of
 * node CPU time, disk bytes and metered energy and pick the shift at which
 * the activity explains the power best: Pearson r with CPU time, or the
 * multiple correlation with CPU time and disk bytes where the disk adds
 * significantly (a disk-heavy node's power does not follow its CPU). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_collector.h"

void erg_lag_init(struct erg_lag *l) {
  memset(l, 0, sizeof *l);
  l->nfeeds = 1;
}

void erg_lag_follow(struct erg_lag *dst, const struct erg_lag *src) {
  dst->lag_seconds = src->lag_seconds;
  dst->correlation = src->correlation;
  dst->have_estimate = src->have_estimate;
  dst->confidence = src->confidence;
  dst->pairs = src->pairs;
  dst->changes = src->changes;
  dst->unsure_from = src->unsure_from;
  dst->unsure_to = src->unsure_to;
  dst->restored = src->restored;
  dst->smeared = src->smeared;
  dst->newest = src->newest;
}

void erg_lag_free(struct erg_lag *l) {
  free(l->feed_acc);
  l->feed_acc = NULL;
}

int erg_lag_set_feeds(struct erg_lag *l, int nfeeds) {
  if (nfeeds < 0 || nfeeds > ERG_MAX_FEEDS)
    return -1;
  erg_lag_free(l);
  l->nfeeds = nfeeds;
  return 0;
}

static size_t lag_index(int64_t t) { return (size_t)((uint64_t)t % ERG_LAG_BINS); }

/* The feeds' accumulators of bin i, or NULL before any energy. */
static struct erg_feed_acc *lag_feeds(const struct erg_lag *l, size_t i) {
  return l->feed_acc ? &l->feed_acc[i * (size_t)l->nfeeds] : NULL;
}

static struct erg_lag_bin *lag_bin(struct erg_lag *l, int64_t t) {
  struct erg_lag_bin *b = &l->bins[lag_index(t)];
  if (b->t != t) {
    struct erg_feed_acc *fa = lag_feeds(l, lag_index(t));
    memset(b, 0, sizeof *b);
    if (fa)
      memset(fa, 0, (size_t)l->nfeeds * sizeof *fa);
    b->t = t;
  }
  if (t > l->newest)
    l->newest = t;
  return b;
}

#define LAG_SMEARED (-2) /* lag_spread's feed for energy of too long an interval */

/* Spreads a value over the 1 s bins [t0, t1) overlaps: CPU time when feed
 * is -1, the seconds covered when LAG_SMEARED, else that feed's energy
 * (kept per feed, as in the grid, so a dual-PSU node's power is the sum of
 * its outlets, not their mean). */
static void lag_spread(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double v, double disk,
                       int feed) {
  double a = t0_ns / 1e9, b = t1_ns / 1e9;
  if (b <= a || b - a > ERG_LAG_BINS / 2)
    return;
  for (int64_t s = (int64_t)floor(a); s < b; s++) {
    double lo = a > s ? a : (double)s, hi = b < s + 1 ? b : (double)(s + 1);
    if (hi <= lo)
      continue;
    struct erg_lag_bin *bin = lag_bin(l, s);
    double f = (hi - lo) / (b - a);
    if (feed == LAG_SMEARED) {
      bin->smeared_seconds += hi - lo;
    } else if (feed >= 0) {
      struct erg_feed_acc *fa = &lag_feeds(l, lag_index(s))[feed];
      fa->joules += v * f;
      fa->seconds += hi - lo;
    } else {
      bin->cpu_seconds += v * f;
      bin->disk_bytes += disk * f;
      bin->agent_seconds += hi - lo;
    }
  }
}

void erg_lag_add_activity(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double cpu_seconds,
                          double disk_bytes) {
  lag_spread(l, t0_ns, t1_ns, cpu_seconds, disk_bytes, -1);
}

void erg_lag_add_energy(struct erg_lag *l, int feed, uint64_t t0_ns, uint64_t t1_ns,
                        double joules) {
  if (feed < 0 || feed >= l->nfeeds)
    return;
  if (t1_ns > t0_ns && t1_ns - t0_ns > (uint64_t)(ERG_LAG_MAX_SPAN_SECONDS * 1e9)) {
    lag_spread(l, t0_ns, t1_ns, 0, 0, LAG_SMEARED);
    return;
  }
  if (!l->feed_acc &&
      !(l->feed_acc = calloc((size_t)ERG_LAG_BINS * (size_t)l->nfeeds, sizeof *l->feed_acc)))
    return;
  lag_spread(l, t0_ns, t1_ns, joules, 0, feed);
}

/* A bin's power: Σ over feeds of each feed's mean, only when every feed
 * covered at least half of it. */
static int lag_watts(const struct erg_lag *l, size_t i, double *v) {
  const struct erg_feed_acc *fa = lag_feeds(l, i);
  double w = 0;
  if (!fa || l->nfeeds == 0)
    return 0;
  for (int f = 0; f < l->nfeeds; f++) {
    if (fa[f].seconds < 0.5)
      return 0;
    w += fa[f].joules / fa[f].seconds;
  }
  *v = w;
  return 1;
}

/* Second t's metered power (Σ over feeds); none where any feed's energy
 * came smeared over a long interval. */
static int lag_power(const struct erg_lag *l, int64_t t, double *w) {
  const struct erg_lag_bin *b = &l->bins[lag_index(t)];
  return b->t == t && b->smeared_seconds == 0 && lag_watts(l, lag_index(t), w);
}

/* Second t's activity: CPU seconds and disk bytes per second. */
static int lag_activity(const struct erg_lag *l, int64_t t, double *cpu, double *disk) {
  const struct erg_lag_bin *b = &l->bins[lag_index(t)];
  if (b->t != t || b->agent_seconds < 0.5)
    return 0;
  *cpu = b->cpu_seconds / b->agent_seconds;
  *disk = b->disk_bytes / b->agent_seconds;
  return 1;
}

/* Seconds of the window with activity whose meter energy came smeared. */
static int lag_smeared_seconds(const struct erg_lag *l, int64_t end, int window) {
  int n = 0;
  double x1, x2;
  for (int64_t t = end - window; t < end; t++) {
    const struct erg_lag_bin *b = &l->bins[lag_index(t)];
    n += b->t == t && b->smeared_seconds > 0 && lag_activity(l, t, &x1, &x2);
  }
  return n;
}

/* How well power(t + lag) follows the activity over the window: Pearson r
 * with CPU time; with CPU time and disk bytes together (the multiple
 * correlation of a two-column least-squares fit, both coefficients ≥ 0)
 * when the disk column explains significantly more (partial F ≥
 * ERG_LAG_DISK_MIN_F). Disk bytes that only add noise, or that follow the
 * CPU, leave r as it was: a second column always raises the multiple
 * correlation a little, and would blur the margins between lags. */
static double lag_corr(const struct erg_lag *l, int64_t end, int window, int lag, int *pairs) {
  double s1 = 0, s2 = 0, sy = 0, s11 = 0, s22 = 0, s12 = 0, s1y = 0, s2y = 0, syy = 0;
  int n = 0;
  for (int64_t t = end - lag - window; t < end - lag; t++) {
    double x1, x2, y;
    if (!lag_activity(l, t, &x1, &x2) || !lag_power(l, t + lag, &y))
      continue;
    x2 /= 1e6; /* MB/s: sums of squares of bytes/s lose digits */
    s1 += x1, s2 += x2, sy += y;
    s11 += x1 * x1, s22 += x2 * x2, s12 += x1 * x2;
    s1y += x1 * y, s2y += x2 * y, syy += y * y;
    n++;
  }
  *pairs = n;
  /* Half a minute of paired seconds at least: short runs correlate by
   * chance at some shift, and a wrong shift is worse than none. */
  if (n < ERG_LAG_MIN_PAIRS)
    return NAN;
  double v1 = s11 - s1 * s1 / n, v2 = s22 - s2 * s2 / n, vy = syy - sy * sy / n;
  if (vy <= 1e-12 || (v1 <= 1e-12 && v2 <= 1e-12))
    return NAN;
  if (v1 <= 1e-12) /* a steady CPU: the disk alone */
    return (s2y - s2 * sy / n) / sqrt(v2 * vy);
  double r1 = (s1y - s1 * sy / n) / sqrt(v1 * vy);
  if (v2 <= 1e-12)
    return r1; /* no disk activity: CPU alone */
  double r2 = (s2y - s2 * sy / n) / sqrt(v2 * vy), r12 = (s12 - s1 * s2 / n) / sqrt(v1 * v2);
  double det = 1 - r12 * r12;
  if (det < 1e-6 || n <= 3)
    return r1; /* the disk follows the CPU: nothing to add */
  /* Standardised coefficients and R² of power on both columns. */
  double b1 = (r1 - r2 * r12) / det, b2 = (r2 - r1 * r12) / det;
  double rr = b1 * r1 + b2 * r2;
  if (!(b1 >= 0 && b2 > 0 && rr > r1 * r1))
    return r1; /* a negative coefficient is no explanation of power */
  if (rr >= 1)
    return 1; /* explained whole (rounding): no residual to test against */
  double f = (rr - r1 * r1) / ((1 - rr) / (n - 3));
  return f >= ERG_LAG_DISK_MIN_F ? sqrt(rr) : r1;
}

/* The lag with the highest r, -1 when none has one. */
static int lag_best(const double *r, int max_lag) {
  int best = -1;
  for (int lag = 0; lag <= max_lag; lag++)
    if (!isnan(r[lag]) && (best < 0 || r[lag] > r[best]))
      best = lag;
  return best;
}

/* How much better lag is than its best rival. Neighbours are left out:
 * a meter that averages over a few seconds correlates almost as well one
 * second off, which says nothing about the estimate being a chance one. */
static double lag_margin(const double *r, int max_lag, int lag) {
  double rival = -1;
  for (int k = 0; k <= max_lag; k++)
    if (abs(k - lag) >= ERG_LAG_RIVAL_SECONDS && !isnan(r[k]) && r[k] > rival)
      rival = r[k];
  return r[lag] - rival;
}

/* Takes lag as the estimate. Cells aligned since `since` (meter time moved
 * back by the larger of the two lags) up to now are uncertain, unless the
 * new lag is a neighbour of the old one (erg_lag_near): a meter that
 * updates or averages over a second or more fits both about as well, so
 * cells aligned with either are not in doubt. Flagging them made every
 * refinement of a lag between two seconds cost a minute of cells. */
static void lag_take(struct erg_lag *l, int lag, const double *r, int max_lag, int64_t since) {
  if (!l->have_estimate || !erg_lag_near(l->lag_seconds, lag)) {
    int wider = l->have_estimate && l->lag_seconds > lag ? l->lag_seconds : lag;
    l->unsure_from = since == INT64_MIN ? INT64_MIN : since - wider;
    l->unsure_to = l->newest;
  }
  l->changes += l->have_estimate;
  l->lag_seconds = lag;
  l->have_estimate = 1;
  l->candidate_votes = 0;
  l->correlation = r[lag];
  l->confidence = lag_margin(r, max_lag, lag);
}

/* A challenger beat the current lag by gain: one more vote for it, and the
 * switch once it won often enough, or by far. */
static void lag_vote(struct erg_lag *l, int best, double gain, const double *r, int max_lag,
                     int window_seconds) {
  if (l->candidate_votes > 0 && l->candidate == best) {
    l->candidate_votes++;
  } else {
    l->candidate = best;
    l->candidate_votes = 1;
    l->candidate_since = l->newest;
  }
  /* Estimates a few seconds apart share most of their window, and so most
   * of their noise: the wins must span a window of fresh data. */
  bool long_enough = l->newest - l->candidate_since >= window_seconds;
  if ((l->candidate_votes >= ERG_LAG_SWITCH_VOTES && long_enough) ||
      gain >= ERG_LAG_SWITCH_NOW_GAIN)
    lag_take(l, best, r, max_lag, l->candidate_since);
}

int erg_lag_estimate(struct erg_lag *l, int max_lag_seconds, int window_seconds) {
  /* The newest seconds may still be incomplete on either side. */
  int64_t end = l->newest - 2;
  if (max_lag_seconds + window_seconds + 4 > ERG_LAG_BINS)
    window_seconds = ERG_LAG_BINS - max_lag_seconds - 4;
  if (max_lag_seconds < 0 || window_seconds <= 0)
    return 0;
  double r[ERG_LAG_BINS];
  int pairs[ERG_LAG_BINS];
  for (int lag = 0; lag <= max_lag_seconds; lag++)
    r[lag] = lag_corr(l, end, window_seconds, lag, &pairs[lag]);
  /* A meter that times nothing finer than its long intervals: no lag can
   * be told from it. Said only with enough of them, and none of the rest. */
  l->smeared = pairs[0] < ERG_LAG_MIN_PAIRS &&
               lag_smeared_seconds(l, end, window_seconds) >= ERG_LAG_MIN_PAIRS;
  int best = lag_best(r, max_lag_seconds);
  /* Without a clear relation (idle node, flat load, a chance peak) keep the
   * old estimate; a challenger's run of wins is broken. */
  if (best < 0 || r[best] < ERG_LAG_MIN_R ||
      lag_margin(r, max_lag_seconds, best) < ERG_LAG_MIN_MARGIN) {
    l->candidate_votes = 0;
    return 0;
  }
  l->pairs = pairs[best];
  if (!l->have_estimate) {
    lag_take(l, best, r, max_lag_seconds, INT64_MIN);
    return 1;
  }
  int cur = l->lag_seconds;
  double gain = cur <= max_lag_seconds && !isnan(r[cur]) ? r[best] - r[cur] : INFINITY;
  /* The last run's lag has no votes of this run behind it: one clear loss
   * is enough, and every cell aligned with it is then in doubt. Within
   * the gain it is as good as the best: confirmed. */
  if (l->restored) {
    l->restored = 0;
    if (best != cur && gain >= ERG_LAG_SWITCH_GAIN) {
      lag_take(l, best, r, max_lag_seconds, INT64_MIN);
      return 1;
    }
  }
  if (best != cur && gain >= ERG_LAG_SWITCH_GAIN) {
    lag_vote(l, best, gain, r, max_lag_seconds, window_seconds);
  } else {
    l->candidate_votes = 0;
  }
  if (l->lag_seconds == cur && cur <= max_lag_seconds && !isnan(r[cur])) {
    l->correlation = r[cur];
    l->confidence = lag_margin(r, max_lag_seconds, cur);
  }
  return 1;
}

bool erg_lag_near(int a, int b) {
  return abs(a - b) < ERG_LAG_RIVAL_SECONDS;
}

bool erg_lag_unresolved(const struct erg_lag *l) {
  return !l->have_estimate && l->smeared;
}

bool erg_lag_cell_unsure(const struct erg_lag *l, int64_t t0_seconds, unsigned step_seconds) {
  if (!l->have_estimate)
    return !l->smeared;
  return t0_seconds + (int64_t)step_seconds > l->unsure_from && t0_seconds <= l->unsure_to;
}

void erg_lag_restore(struct erg_lag *l, int lag_seconds, double correlation, double confidence) {
  l->lag_seconds = lag_seconds;
  l->correlation = correlation;
  l->confidence = confidence;
  l->have_estimate = 1;
  l->restored = 1;
  l->candidate_votes = 0;
  l->unsure_from = l->unsure_to = INT64_MIN; /* no cell in doubt */
}

/* ---- the estimate on disk ---- */

#define LAG_FILE_MAGIC "erg-meter-lag 1"

int erg_lag_file_path(const char *journal_dir, const char *node, char *out, size_t outlen) {
  if (erg_journal_path(journal_dir, node, out, outlen) != 0)
    return -1;
  size_t n = strlen(out); /* DIR/NODE.csv -> DIR/NODE.lag */
  memcpy(out + n - 3, "lag", 3);
  return 0;
}

int erg_lag_file_write(const char *path, const struct erg_lag_saved *s, char *why, size_t whylen) {
  char buf[256];
  int n = snprintf(buf, sizeof buf,
                   LAG_FILE_MAGIC " lag_seconds=%d correlation=%.4f confidence=%.4f "
                   "estimated_unix_seconds=%" PRId64 "\n",
                   s->lag_seconds, s->correlation, s->confidence, s->estimated_s);
  if (erg_write_file_atomic(path, buf, (size_t)n) != 0) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int erg_lag_file_read(const char *path, struct erg_lag_saved *s, char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT)
      return 0;
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[256];
  int ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  int used = 0;
  /* Exactly one line of the known form, the lag within the estimator's
   * range: a hand-edited or damaged file is refused, never half-used. */
  ok = ok && sscanf(line, LAG_FILE_MAGIC " lag_seconds=%d correlation=%lf confidence=%lf "
                          "estimated_unix_seconds=%" SCNd64 "%n",
                    &s->lag_seconds, &s->correlation, &s->confidence, &s->estimated_s,
                    &used) == 4;
  ok = ok && (line[used] == '\n' || line[used] == '\0') && s->lag_seconds >= 0 &&
       s->lag_seconds < ERG_LAG_BINS / 2 && isfinite(s->correlation) &&
       isfinite(s->confidence);
  if (!ok) {
    snprintf(why, whylen, "%s: not an erg meter lag file (expected '" LAG_FILE_MAGIC
             " lag_seconds=N ...')", path);
    return -1;
  }
  return 1;
}
