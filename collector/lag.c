// SPDX-License-Identifier: GPL-3.0-or-later
/* Lag between a node's activity and its meter's reading. PDUs average and
 * refresh their values late; the grid must shift meter data back by that
 * delay or the attribution of every cell is smeared. We keep 1 s bins of
 * node CPU time, disk bytes, GPU board energy and metered energy and pick
 * the shift at which the activity explains the power best: Pearson r with
 * CPU time, or the multiple correlation with CPU time and the disk bytes
 * or GPU power where they add significantly (a disk-heavy node's power
 * does not follow its CPU, a GPU node's follows its GPUs' board power). */
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
  dst->lag_fraction_seconds = src->lag_fraction_seconds;
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
  dst->average_seconds = src->average_seconds;
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
#define LAG_GPU (-3)     /* lag_spread's feed for GPU board energy */

/* Spreads a value over the 1 s bins [t0, t1) overlaps: CPU time when feed
 * is -1, GPU energy when LAG_GPU, the seconds covered when LAG_SMEARED,
 * else that feed's energy
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
    } else if (feed == LAG_GPU) {
      bin->gpu_joules += v * f; /* its seconds are the agent's (the CPU time's) */
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

void erg_lag_add_gpu(struct erg_lag *l, uint64_t t0_ns, uint64_t t1_ns, double joules) {
  if (joules > 0)
    lag_spread(l, t0_ns, t1_ns, joules, 0, LAG_GPU);
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

/* The activity columns of lag_corr, in the order they are tried. */
enum { LAG_X_CPU, LAG_X_DISK, LAG_X_GPU, LAG_NX };

/* Second t's activity: CPU seconds, disk MB (sums of squares of bytes/s
 * lose digits) and GPU board joules per second. */
static int lag_activity1(const struct erg_lag *l, int64_t t, double x[LAG_NX]) {
  const struct erg_lag_bin *b = &l->bins[lag_index(t)];
  if (b->t != t || b->agent_seconds < 0.5)
    return 0;
  x[LAG_X_CPU] = b->cpu_seconds / b->agent_seconds;
  x[LAG_X_DISK] = b->disk_bytes / b->agent_seconds / 1e6;
  x[LAG_X_GPU] = b->gpu_joules / b->agent_seconds;
  return 1;
}

/* The activity as a meter that averages over average_seconds shows it:
 * the mean of the seconds t - average_seconds + 1 .. t, all of them seen. */
static int lag_activity(const struct erg_lag *l, int64_t t, double x[LAG_NX]) {
  int n = l->average_seconds > 1 ? l->average_seconds : 1;
  if (!lag_activity1(l, t, x))
    return 0;
  for (int k = 1; k < n; k++) {
    double y[LAG_NX];
    if (!lag_activity1(l, t - k, y))
      return 0;
    for (int i = 0; i < LAG_NX; i++)
      x[i] += y[i];
  }
  for (int i = 0; n > 1 && i < LAG_NX; i++)
    x[i] /= n;
  return 1;
}

/* Seconds of the window with activity whose meter energy came smeared. */
static int lag_smeared_seconds(const struct erg_lag *l, int64_t end, int window) {
  int n = 0;
  double x[LAG_NX];
  for (int64_t t = end - window; t < end; t++) {
    const struct erg_lag_bin *b = &l->bins[lag_index(t)];
    n += b->t == t && b->smeared_seconds > 0 && lag_activity(l, t, x);
  }
  return n;
}

/* R² of power on the standardised columns in set (bit i: column i) from
 * their correlations rx (between columns) and ry (with power); coef gets
 * the standardised coefficients. -1 when the columns are (nearly)
 * collinear: one follows the others and adds nothing. */
static double lag_r2(const double rx[LAG_NX][LAG_NX], const double ry[LAG_NX], unsigned set,
                     double coef[LAG_NX]) {
  int idx[LAG_NX], k = 0;
  for (int i = 0; i < LAG_NX; i++)
    if (set & (1u << i))
      idx[k++] = i;
  double a[LAG_NX][LAG_NX + 1], det = 1;
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++)
      a[i][j] = rx[idx[i]][idx[j]];
    a[i][k] = ry[idx[i]];
  }
  for (int c = 0; c < k; c++) { /* Gauss-Jordan with partial pivoting */
    int p = c;
    for (int r = c + 1; r < k; r++)
      if (fabs(a[r][c]) > fabs(a[p][c]))
        p = r;
    for (int j = 0; p != c && j <= k; j++) {
      double t = a[c][j];
      a[c][j] = a[p][j], a[p][j] = t;
    }
    det *= a[c][c];
    if (fabs(det) < 1e-6)
      return -1;
    for (int r = 0; r < k; r++) {
      double m = r == c ? 0 : a[r][c] / a[c][c];
      for (int j = c; m != 0 && j <= k; j++)
        a[r][j] -= m * a[c][j];
    }
  }
  double rr = 0;
  for (int i = 0; i < k; i++) {
    coef[idx[i]] = a[i][k] / a[i][i];
    rr += coef[idx[i]] * ry[idx[i]];
  }
  return rr;
}

/* How well power(t + lag) follows the activity over the window: Pearson r
 * with CPU time (with the disk bytes alone, or GPU power alone, where the
 * CPU is steady; with GPU power alone where that follows the power better
 * than the CPU does); then the multiple correlation of a least-squares fit
 * with the disk bytes and GPU power added, each only where it explains
 * significantly more (partial F >= ERG_LAG_DISK_MIN_F) with every
 * coefficient >= 0. Columns that only add noise, or that follow another
 * one, leave r as it was: a column always raises the multiple correlation
 * a little, and would blur the margins between lags. A node without GPUs
 * (no GPU energy) gets exactly the CPU-and-disk estimate. */
static double lag_corr(const struct erg_lag *l, int64_t end, int window, int lag, int *pairs) {
  double s[LAG_NX] = {0}, sxx[LAG_NX][LAG_NX] = {{0}}, sxy[LAG_NX] = {0}, sy = 0, syy = 0;
  int n = 0;
  for (int64_t t = end - lag - window; t < end - lag; t++) {
    double x[LAG_NX], y;
    if (!lag_activity(l, t, x) || !lag_power(l, t + lag, &y))
      continue;
    for (int i = 0; i < LAG_NX; i++) {
      s[i] += x[i];
      sxy[i] += x[i] * y;
      for (int j = 0; j < LAG_NX; j++)
        sxx[i][j] += x[i] * x[j];
    }
    sy += y, syy += y * y;
    n++;
  }
  *pairs = n;
  /* Half a minute of paired seconds at least: short runs correlate by
   * chance at some shift, and a wrong shift is worse than none. */
  if (n < ERG_LAG_MIN_PAIRS)
    return NAN;
  double v[LAG_NX], vy = syy - sy * sy / n, rx[LAG_NX][LAG_NX], ry[LAG_NX];
  unsigned varies = 0;
  for (int i = 0; i < LAG_NX; i++) {
    v[i] = sxx[i][i] - s[i] * s[i] / n;
    varies |= (v[i] > 1e-12 ? 1u : 0u) << i;
  }
  if (vy <= 1e-12 || !varies)
    return NAN;
  for (int i = 0; i < LAG_NX; i++) {
    ry[i] = varies & (1u << i) ? (sxy[i] - s[i] * sy / n) / sqrt(v[i] * vy) : 0;
    for (int j = 0; j < LAG_NX; j++)
      rx[i][j] = (varies >> i & 1u) && (varies >> j & 1u)
                     ? (sxx[i][j] - s[i] * s[j] / n) / sqrt(v[i] * v[j])
                     : 0;
  }
  /* The first column: CPU time; GPU power where it alone explains
   * significantly more (the test for adding a column, so boards whose
   * power the meter does not show leave a CPU node's estimate as it was);
   * a steady CPU: the better of the others. */
  int first = LAG_X_CPU;
  if (!(varies & (1u << LAG_X_CPU))) {
    first = !(varies & (1u << LAG_X_GPU)) ||
                    ((varies & (1u << LAG_X_DISK)) && ry[LAG_X_DISK] >= ry[LAG_X_GPU])
                ? LAG_X_DISK
                : LAG_X_GPU;
  } else if ((varies & (1u << LAG_X_GPU)) && ry[LAG_X_GPU] > 0 && n > 2) {
    double rg = ry[LAG_X_GPU] * ry[LAG_X_GPU], rc = ry[LAG_X_CPU] > 0 ? ry[LAG_X_CPU] : 0;
    rc *= rc;
    if (rg > rc && (rg >= 1 || (rg - rc) / ((1 - rg) / (n - 2)) >= ERG_LAG_DISK_MIN_F))
      first = LAG_X_GPU;
  }
  unsigned set = 1u << first;
  double r = ry[first], rr = r * r;
  /* Then the others, the most significant first, while one adds. */
  for (int k = 1; k < LAG_NX && rr < 1; k++) {
    int best = -1;
    double best_f = 0, best_rr = 0;
    for (int i = 0; i < LAG_NX; i++) {
      double coef[LAG_NX] = {0};
      unsigned with = set | (1u << i);
      if (with == set || !(varies & (1u << i)) || n <= k + 2)
        continue;
      double rr2 = lag_r2(rx, ry, with, coef);
      if (!(rr2 > rr))
        continue; /* collinear, or nothing added */
      bool positive = coef[i] > 0;
      for (int j = 0; j < LAG_NX; j++)
        positive = positive && (!(set & (1u << j)) || coef[j] >= 0);
      /* A negative coefficient is no explanation of power. */
      if (!positive)
        continue;
      double f = rr2 >= 1 ? INFINITY : (rr2 - rr) / ((1 - rr2) / (n - k - 2));
      if (f >= ERG_LAG_DISK_MIN_F && f > best_f)
        best = i, best_f = f, best_rr = rr2;
    }
    if (best < 0)
      break;
    set |= 1u << best;
    rr = best_rr;
  }
  if (set == (1u << first))
    return r;
  return rr >= 1 ? 1 : sqrt(rr); /* >= 1: explained whole (rounding) */
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

/* The part of a second by which the correlation's peak lies off lag: the
 * vertex of the parabola through r at lag − 1, lag, lag + 1 (a delay of
 * 2.3 s correlates best at 2 s, and better at 3 s than at 1 s), within
 * ±0.5 s; 0 when a neighbour has no r or the three do not make a peak. */
static double lag_fraction(const double *r, int max_lag, int lag) {
  if (lag < 1 || lag >= max_lag || isnan(r[lag - 1]) || isnan(r[lag + 1]) || isnan(r[lag]))
    return 0;
  double curv = r[lag - 1] - 2 * r[lag] + r[lag + 1];
  if (!(curv < 0))
    return 0;
  double f = 0.5 * (r[lag - 1] - r[lag + 1]) / curv;
  return f < -0.5 ? -0.5 : f > 0.5 ? 0.5 : f;
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
  l->lag_fraction_seconds = lag_fraction(r, max_lag, lag);
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
    l->lag_fraction_seconds = lag_fraction(r, max_lag_seconds, cur);
  }
  return 1;
}

bool erg_lag_near(int a, int b) { return abs(a - b) < ERG_LAG_RIVAL_SECONDS; }

int erg_power_halves(uint64_t t0_ns, uint64_t t1_ns, double w0, double w1, double j,
                     uint64_t *tm_ns, double *first) {
  if (t1_ns <= t0_ns + 1 || !isfinite(w0) || !isfinite(w1) || !isfinite(j))
    return -1;
  *tm_ns = t0_ns + (t1_ns - t0_ns) / 2;
  *first = w0 + w1 > 0 ? j * (3 * w0 + w1) / (4 * (w0 + w1)) : j / 2;
  return 0;
}

double erg_lag_shift_seconds(const struct erg_lag *l) {
  double avg = l->average_seconds > 1 ? (l->average_seconds - 1) / 2.0 : 0;
  double lag = l->have_estimate ? l->lag_seconds + l->lag_fraction_seconds : 0;
  return lag + avg > 0 ? lag + avg : 0;
}

bool erg_lag_unresolved(const struct erg_lag *l) { return !l->have_estimate && l->smeared; }

bool erg_lag_cell_unsure(const struct erg_lag *l, int64_t t0_seconds, unsigned step_seconds) {
  if (!l->have_estimate)
    return !l->smeared;
  return t0_seconds + (int64_t)step_seconds > l->unsure_from && t0_seconds <= l->unsure_to;
}

void erg_lag_restore(struct erg_lag *l, int lag_seconds, double fraction_seconds,
                     double correlation, double confidence) {
  l->lag_seconds = lag_seconds;
  l->lag_fraction_seconds = fraction_seconds;
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
  snprintf(buf, sizeof buf,
           LAG_FILE_MAGIC " lag_seconds=%d correlation=%.4f confidence=%.4f "
                          "estimated_unix_seconds=%" PRId64 " fraction_seconds=%.3f\n",
           s->lag_seconds, s->correlation, s->confidence, s->estimated_s, s->fraction_seconds);
  return erg_state_file_write(path, buf, why, whylen);
}

int erg_lag_file_read(const char *path, struct erg_lag_saved *s, char *why, size_t whylen) {
  char line[256];
  int rc = erg_state_file_read(path, line, sizeof line, why, whylen);
  if (rc <= 0)
    return rc;
  int ok = 1, used = 0;
  /* Exactly one line of the known form, the lag within the estimator's
   * range: a hand-edited or damaged file is refused, never half-used. */
  ok = ok && sscanf(line,
                    LAG_FILE_MAGIC " lag_seconds=%d correlation=%lf confidence=%lf "
                                   "estimated_unix_seconds=%" SCNd64 "%n",
                    &s->lag_seconds, &s->correlation, &s->confidence, &s->estimated_s, &used) == 4;
  /* The fraction of a second came later: a file without it has none. */
  int more = 0;
  s->fraction_seconds = 0;
  if (ok && sscanf(line + used, " fraction_seconds=%lf%n", &s->fraction_seconds, &more) == 1)
    used += more;
  ok = ok && isfinite(s->fraction_seconds) && fabs(s->fraction_seconds) <= 0.5;
  ok = ok && (line[used] == '\n' || line[used] == '\0') && s->lag_seconds >= 0 &&
       s->lag_seconds < ERG_LAG_BINS / 2 && isfinite(s->correlation) && isfinite(s->confidence);
  if (!ok) {
    snprintf(why, whylen,
             "%s: not an erg meter lag file (expected '" LAG_FILE_MAGIC " lag_seconds=N ...')",
             path);
    return -1;
  }
  return 1;
}
