// SPDX-License-Identifier: GPL-3.0-or-later
/* Energy of an archive over a period (erg report, the pages' key
 * tables): each part read from the finest resolution that holds it
 * (docs/report.md). Calls only the store reader and the energy factors. */
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "web_int.h"

/* ---- choosing the resolution ---- */

struct report_rra {
  char cf[16];
  unsigned long rows, pdp;
};

#define REPORT_LAYOUT_DS 8

struct report_layout {
  unsigned long step;
  time_t last;
  struct report_rra rra[REPORT_MAX_RRAS];
  int n;
  char ds[REPORT_LAYOUT_DS][32]; /* the data sources' names */
  int nds;
};

static void report_layout_entry(struct report_layout *L, const rrd_info_t *i) {
  int idx, off = 0;
  size_t len = strlen(i->key);
  if (!strncmp(i->key, "ds[", 3) && len > 10 && !strcmp(i->key + len - 7, "].index")) {
    if (L->nds < REPORT_LAYOUT_DS && len - 10 < sizeof L->ds[0]) {
      memcpy(L->ds[L->nds], i->key + 3, len - 10);
      L->ds[L->nds++][len - 10] = '\0';
    }
    return;
  }
  if (!strcmp(i->key, "step") && i->type == RD_I_CNT)
    L->step = i->value.u_cnt;
  else if (!strcmp(i->key, "last_update") && i->type == RD_I_CNT)
    L->last = (time_t)i->value.u_cnt;
  else if (sscanf(i->key, "rra[%d].%n", &idx, &off) == 1 && off > 0 && idx >= 0 &&
           idx < REPORT_MAX_RRAS) {
    const char *f = i->key + off;
    if (!strcmp(f, "cf") && i->type == RD_I_STR)
      erg_strlcpy(L->rra[idx].cf, i->value.u_str, sizeof L->rra[idx].cf);
    else if (!strcmp(f, "rows") && i->type == RD_I_CNT)
      L->rra[idx].rows = i->value.u_cnt;
    else if (!strcmp(f, "pdp_per_row") && i->type == RD_I_CNT)
      L->rra[idx].pdp = i->value.u_cnt;
    if (idx >= L->n)
      L->n = idx + 1;
  }
}

static int report_layout_read(const char *path, struct report_layout *L, char *why, size_t whylen) {
  memset(L, 0, sizeof *L);
  rrd_info_t *info;
  int tries = 0;
  do {
    rrd_clear_error();
    info = rrd_info_r(path);
  } while (!info && web_rrd_retry(&tries));
  if (!info) {
    snprintf(why, whylen, "%s: %s", path, rrd_get_error());
    return -1;
  }
  for (const rrd_info_t *i = info; i; i = i->next)
    report_layout_entry(L, i);
  rrd_info_free(info);
  if (!L->step || !L->n) {
    snprintf(why, whylen, "%s: not an RRD archive with RRAs", path);
    return -1;
  }
  return 0;
}

/* One AVERAGE resolution of an archive and how far back it reaches (RRD's
 * own reach: last update rounded down to the resolution, minus rows x
 * resolution), as rrd_fetch sees it. */
struct report_res {
  unsigned long res;
  int64_t reach;
};

static int report_res_cmp(const void *a, const void *b) {
  unsigned long x = ((const struct report_res *)a)->res, y = ((const struct report_res *)b)->res;
  return x < y ? -1 : x > y;
}

/* The archive's AVERAGE resolutions, finest first; returns how many. */
static int report_resolutions(const struct report_layout *L, struct report_res *out) {
  int n = 0;
  for (int i = 0; i < L->n; i++) {
    if (strcmp(L->rra[i].cf, "AVERAGE") || !L->rra[i].pdp || !L->rra[i].rows)
      continue;
    unsigned long res = L->rra[i].pdp * L->step;
    int64_t end = (int64_t)L->last - (int64_t)L->last % (int64_t)res;
    out[n++] = (struct report_res){res, end - (int64_t)(res * L->rra[i].rows)};
  }
  qsort(out, (size_t)n, sizeof *out, report_res_cmp);
  return n;
}

static int report_has_cf(const struct report_layout *L, const char *cf, unsigned long res) {
  for (int i = 0; i < L->n; i++)
    if (!strcmp(L->rra[i].cf, cf) && L->rra[i].pdp * L->step == res)
      return 1;
  return 0;
}

/* ---- fetching and integrating ---- */

struct report_fetch {
  time_t start, end;
  unsigned long step, nds;
  char **names;
  rrd_value_t *data;
};

static void report_fetch_free(struct report_fetch *f) {
  for (unsigned long i = 0; f->names && i < f->nds; i++)
    free(f->names[i]);
  free(f->names);
  free(f->data);
  memset(f, 0, sizeof *f);
}

static int report_fetch(const char *path, const char *cf, int64_t from, int64_t to,
                        unsigned long res, struct report_fetch *f, char *why, size_t whylen) {
  memset(f, 0, sizeof *f);
  f->start = (time_t)from;
  f->end = (time_t)to;
  f->step = res;
  int rc, tries = 0;
  do {
    rrd_clear_error();
    rc = rrd_fetch_r(path, cf, &f->start, &f->end, &f->step, &f->nds, &f->names, &f->data);
  } while (rc != 0 && web_rrd_retry(&tries));
  if (rc != 0) {
    snprintf(why, whylen, "fetch %s %s: %s", path, cf, rrd_get_error());
    memset(f, 0, sizeof *f);
    return -1;
  }
  return 0;
}

static long report_ds_index(const struct report_fetch *f, const char *ds) {
  for (unsigned long i = 0; i < f->nds; i++)
    if (!strcmp(f->names[i], ds))
      return (long)i;
  return -1;
}

/* Row r holds the mean over (start + r*step, start + (r+1)*step]; only the
 * part of that interval inside [from, to] counts. Unknown rows count as
 * neither energy nor time: the mean is over known time only. Facility
 * energy and CO2 are integrated row by row with the factors in force in
 * each part of the row (not the total times a mean factor). Adds to v. */
static void report_integrate(const struct report_fetch *f, long ds, int64_t from, int64_t to,
                             const struct erg_energy_factors *k, struct report_value *v) {
  static const struct erg_energy_factors none = {.co2_g_per_kwh = NAN, .pue = 1};
  unsigned long rows = f->step ? (unsigned long)(f->end - f->start) / f->step : 0;
  k = k ? k : &none;
  for (unsigned long r = 0; ds >= 0 && r < rows; r++) {
    int64_t lo = (int64_t)f->start + (int64_t)(r * f->step), hi = lo + (int64_t)f->step;
    double w = f->data[r * f->nds + (unsigned long)ds];
    lo = lo > from ? lo : from;
    hi = hi < to ? hi : to;
    if (hi <= lo || isnan(w))
      continue;
    double fj, g;
    erg_energy_factors_apply(k, lo, hi, w, &fj, &g);
    v->energy_j += w * (double)(hi - lo);
    v->known_s += (double)(hi - lo);
    v->facility_j += fj;
    v->co2_g += g;
    if (w > 0 && (!v->first_s || lo < v->first_s))
      v->first_s = lo;
    if (w > 0 && hi > v->last_s)
      v->last_s = hi;
  }
}

double report_mean_w(const struct report_value *v, int span) {
  double s = span ? (double)(v->last_s - v->first_s) : v->known_s;
  return s > 0 ? v->energy_j / s : NAN;
}

static double report_peak(const struct report_fetch *f, long ds, int64_t from, int64_t to) {
  unsigned long rows = f->step ? (unsigned long)(f->end - f->start) / f->step : 0;
  double peak = NAN;
  for (unsigned long r = 0; ds >= 0 && r < rows; r++) {
    int64_t lo = (int64_t)f->start + (int64_t)(r * f->step);
    double w = f->data[r * f->nds + (unsigned long)ds];
    if (lo + (int64_t)f->step > from && lo < to && !isnan(w) && !(w <= peak))
      peak = w;
  }
  return peak;
}

/* One part of the period, [lo, hi], at resolution res: added to out. */
static int report_part(const char *path, const struct report_layout *L, unsigned long res,
                       const char *const *ds, int nds, int64_t lo, int64_t hi,
                       const struct erg_energy_factors *k, struct report_value *out, char *why,
                       size_t whylen) {
  struct report_fetch f;
  if (report_fetch(path, "AVERAGE", lo, hi, res, &f, why, whylen) != 0)
    return -1;
  for (int i = 0; i < nds; i++) {
    report_integrate(&f, report_ds_index(&f, ds[i]), lo, hi, k, &out[i]);
    out[i].step_s = f.step > out[i].step_s ? f.step : out[i].step_s;
  }
  if (report_has_cf(L, "MAX", res)) {
    report_fetch_free(&f);
    if (report_fetch(path, "MAX", lo, hi, res, &f, why, whylen) != 0)
      return -1;
  }
  double peak = report_peak(&f, report_ds_index(&f, ds[0]), lo, hi);
  if (!isnan(peak) && !(peak <= out[0].peak_w))
    out[0].peak_w = peak;
  report_fetch_free(&f);
  return 0;
}

/* Each part of [from, to] is read from the finest resolution that still
 * holds it: the newest part from the step archive, what lies before its
 * reach from the 1-min one, and so on. So a stretch of data gives the same
 * energy whatever period holds it, as long as the finest archive keeps it
 * (a coarser row with unknown cells would count it otherwise: xff). */
int report_archive(const char *daemon, const char *path, const char *const *ds, int nds,
                   int64_t from, int64_t to, const struct erg_energy_factors *k,
                   struct report_value *out, char *why, size_t whylen) {
  struct report_layout L;
  struct report_res res[REPORT_MAX_RRAS];
  memset(out, 0, (size_t)nds * sizeof *out);
  for (int i = 0; i < nds; i++)
    out[i].peak_w = NAN;
  /* Updates still held by rrdcached are not in the file yet. */
  rrdc_flush_if_daemon(daemon, path);
  if (report_layout_read(path, &L, why, whylen) != 0)
    return -1;
  for (int i = 0; i < nds; i++) {
    out[i].absent = 1;
    for (int d = 0; d < L.nds; d++)
      if (!strcmp(L.ds[d], ds[i]))
        out[i].absent = 0;
  }
  int nres = report_resolutions(&L, res);
  int64_t hi = to < (int64_t)L.last ? to : (int64_t)L.last;
  for (int r = 0; r < nres && hi > from; r++) {
    int64_t lo = res[r].reach > from ? res[r].reach : from;
    if (lo >= hi)
      continue; /* a coarser one that does not reach further */
    if (report_part(path, &L, res[r].res, ds, nds, lo, hi, k, out, why, whylen) != 0)
      return -1;
    hi = lo;
  }
  for (int i = 0; i < nds; i++)
    out[i].step_s = out[i].step_s ? out[i].step_s : nres ? res[0].res : L.step;
  return 0;
}
