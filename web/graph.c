// SPDX-License-Identifier: GPL-3.0-or-later
/* Graphs rendered by librrd (rrd_graph_v) to a temporary name and renamed,
 * so a browser never sees half a file. Data text reaches rrdgraph only
 * through web_graph_text (legends, titles) and web_graph_path (DEF file
 * names). rrd_graph_v is not thread-safe: one rendering thread. */
#include <errno.h>
#include <math.h>
#include <rrd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "web_int.h"

#define MAX_STACKED 12 /* keys drawn on their own; the rest add up to "other" */
#define MAX_TOTAL_NODES 16
#define LEGEND_CHARS 48

static const char *const palette[] = {"1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd", "8c564b",
                                      "e377c2", "bcbd22", "17becf", "aec7e8", "ffbb78", "98df8a"};

const struct web_range web_ranges[WEB_NRANGES] = {{"hour", 3600},
                                                  {"day", 86400},
                                                  {"week", 7 * 86400},
                                                  {"month", 31 * 86400},
                                                  {"year", 366 * 86400}};

/* ---- text for rrdgraph ---- */

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p) {
  size_t n = *p < 0x80             ? 1
             : (*p & 0xe0) == 0xc0 ? 2
             : (*p & 0xf0) == 0xe0 ? 3
             : (*p & 0xf8) == 0xf0 ? 4
                                   : 0;
  if (n == 2 && *p < 0xc2)
    return 0; /* overlong */
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

/* Legend or title text for rrdgraph. rrdgraph splits legends on ':' (so
 * it is written "\:"), treats '\' + letter as a layout code and rejects
 * unknown ones, and pango wants valid UTF-8: backslashes become '/',
 * control bytes and broken UTF-8 become '?'. Cut at maxchars characters. */
void web_graph_text(const char *in, char *out, size_t outlen, size_t maxchars, int legend) {
  size_t o = 0, chars = 0;
  const unsigned char *p = (const unsigned char *)in;
  while (*p && chars < maxchars && o + 5 < outlen) {
    size_t n = utf8_len(p);
    if (n == 0 || *p < 0x20 || *p == 0x7f) {
      out[o++] = '?';
      p++;
    } else if (*p == '\\') {
      out[o++] = '/';
      p++;
    } else {
      if (*p == ':' && legend)
        out[o++] = '\\';
      memcpy(out + o, p, n);
      o += n;
      p += n;
    }
    chars++;
  }
  out[o] = '\0';
}

/* A file name inside DEF: ':' is written "\:". A '\' cannot be written
 * at all, so such a path is refused. */
int web_graph_path(const char *in, char *out, size_t outlen) {
  size_t o = 0;
  for (const char *p = in; *p; p++) {
    if (*p == '\\' || o + 3 >= outlen)
      return -1;
    if (*p == ':')
      out[o++] = '\\';
    out[o++] = *p;
  }
  out[o] = '\0';
  return 0;
}

/* A graph need not be drawn again while it is younger than about two
 * pixels of its range (hour: 10 s, day: 4 min, year: a day), or when it
 * was drawn after the data's last update (an ended job). */
int web_graph_fresh(const char *file, int64_t now, long range_seconds, int64_t data_last) {
  struct stat sb;
  if (stat(file, &sb) != 0)
    return 0;
  int64_t m = (int64_t)sb.st_mtime;
  return m >= now - range_seconds / 360 || (data_last > 0 && m > data_last);
}

/* ---- rrd_graph_v ---- */

struct argv_buf {
  char *v[2 * WEB_MAX_KEYS + 64];
  int n;
  int overflow;
};

static void argv_add(struct argv_buf *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void argv_add(struct argv_buf *a, const char *fmt, ...) {
  if (a->n >= (int)(sizeof a->v / sizeof a->v[0]) - 1) {
    a->overflow = 1;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&a->v[a->n], fmt, ap) >= 0)
    a->n++;
  else
    a->overflow = 1;
  va_end(ap);
}

static void argv_free(struct argv_buf *a) {
  for (int i = 0; i < a->n; i++)
    free(a->v[i]);
  a->n = 0;
}

static void graph_begin(struct argv_buf *a, const struct web_ctx *c, const char *file,
                        const char *title, int64_t start, int64_t end, int small) {
  char t[400];
  web_graph_text(title, t, sizeof t, 120, 0);
  argv_add(a, "graph");
  argv_add(a, "%s.tmp", file);
  argv_add(a, "--imgformat=%s", c->fmt);
  argv_add(a, "--start=%lld", (long long)start);
  argv_add(a, "--end=%lld", (long long)end);
  /* The pages have room (img max-width 100 %): 960 px wide by default. */
  argv_add(a, "--width=%d", small ? 400 : 960);
  argv_add(a, "--height=%d", small ? 120 : 300);
  argv_add(a, "--vertical-label=W");
  argv_add(a, "--title=%s", t);
  /* rrdcached holds recent updates: flush the files drawn first. */
  if (erg_store_daemon(c->st))
    argv_add(a, "--daemon=%s", erg_store_daemon(c->st));
  if (small)
    argv_add(a, "--no-legend");
}

/* Renders to file.tmp and renames; frees the arguments. rrd_graph_v
 * permutes argv (getopt), so the temporary name is kept aside. */
static int graph_finish(struct argv_buf *a, const char *file, char *why, size_t whylen) {
  char tmp[1300];
  int rc = 0;
  snprintf(tmp, sizeof tmp, "%s.tmp", file);
  if (a->overflow) {
    snprintf(why, whylen, "graph %s: too many arguments", file);
    rc = -1;
  } else {
    /* rrd_graph_v permutes its argv: each try gets a fresh copy. */
    char *v[sizeof a->v / sizeof a->v[0]];
    rrd_info_t *info;
    int tries = 0;
    do {
      memcpy(v, a->v, sizeof v);
      rrd_clear_error();
      info = rrd_graph_v(a->n, v);
    } while (!info && web_rrd_retry(&tries));
    if (!info) {
      snprintf(why, whylen, "graph %s: %s", file, rrd_get_error());
      rc = -1;
    } else {
      rrd_info_free(info);
      if (rename(tmp, file) != 0) {
        snprintf(why, whylen, "rename %.300s: %.100s", tmp, strerror(errno));
        rc = -1;
      }
    }
    if (rc != 0)
      unlink(tmp);
  }
  argv_free(a);
  return rc;
}

/* Measured vs modelled, with idle and dynamic power. */
int web_graph_power(const struct web_ctx *c, const char *erd, const char *file, const char *title,
                    long seconds, int small, char *why, size_t whylen) {
  struct argv_buf a = {.n = 0};
  graph_begin(&a, c, file, title, c->now - seconds, c->now, small);
  argv_add(&a, "--lower-limit=0");
  argv_add(&a, "DEF:m=%s:measured:AVERAGE", erd);
  argv_add(&a, "DEF:p=%s:modelled:AVERAGE", erd);
  argv_add(&a, "DEF:i=%s:idle:AVERAGE", erd);
  argv_add(&a, "DEF:d=%s:dynamic:AVERAGE", erd);
  argv_add(&a, "AREA:i#d0d0d0:idle");
  argv_add(&a, "AREA:d#ffb366:dynamic:STACK");
  /* Dashed, so that it shows where it lies on the measured line. */
  argv_add(&a, "LINE2:m#000000:measured");
  argv_add(&a, "LINE2:p#1f4fd8:modelled (dashed):dashes=6,4");
  return graph_finish(&a, file, why, whylen);
}

static int key_cmp(const void *a, const void *b) {
  double x = ((const struct web_key *)a)->mean_watts, y = ((const struct web_key *)b)->mean_watts;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Adds "CDEF:<head>,k<from>,ADDNAN,...,k<n-1>,ADDNAN<tail>": a sum of key
 * DEFs in which a missing key counts 0. */
static void graph_cdef_sum(struct argv_buf *a, const char *head, size_t from, size_t n,
                           const char *tail) {
  char *rpn = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&rpn, &len);
  if (!f) {
    a->overflow = 1;
    return;
  }
  fprintf(f, "CDEF:%s", head);
  for (size_t k = from; k < n; k++)
    fprintf(f, ",k%zu,ADDNAN", k);
  fputs(tail, f);
  fclose(f);
  argv_add(a, "%s", rpn);
  free(rpn);
}

/* Sum of DEFs k<from>..k<n-1> as CDEF "other" (k12,k13,ADDNAN,...). */
static void graph_other(struct argv_buf *a, size_t from, size_t n) {
  char head[40];
  snprintf(head, sizeof head, "other=k%zu", from);
  graph_cdef_sum(a, head, from + 1, n, "");
  argv_add(a, "AREA:other#909090:%zu other keys:STACK", n - from);
}

/* CDEF "rest" = max(measured − Σ k0..k<n-1>, 0), keys missing counted 0. */
static void graph_rest(struct argv_buf *a, size_t n) {
  graph_cdef_sum(a, "rest=m,0", 0, n, ",-,0,MAX");
  /* The names of erg report's rows (docs/report.md, "Energy outside
   * keys"): the node's idle power not carried by keys, and the rest. */
  argv_add(a, "AREA:rest#d0d0d0:[idle] + [unattributed]");
}

/* At the bottom what no key carries (measured − Σ keys: the idle power
 * under idle_policy = separate, plus dynamic power of cells without agent
 * data; ~0 under even/proportional, whose keys carry the idle power), then
 * the node's keys of one kind stacked (the 12 highest over the range, the
 * rest as one area), then measured on top. Derived from the archives, so
 * it stays right whatever policy wrote them. */
int web_graph_breakdown(const struct web_ctx *c, const char *erd, struct web_key *keys,
                        size_t nkeys, const char *file, const char *title, long seconds, char *why,
                        size_t whylen) {
  struct argv_buf a = {.n = 0};
  for (size_t k = 0; k < nkeys; k++)
    web_key_stats(erg_store_daemon(c->st), keys[k].path, "watts", c->now, seconds, 0,
                  &keys[k].mean_watts, &keys[k].energy_j);
  qsort(keys, nkeys, sizeof *keys, key_cmp);
  graph_begin(&a, c, file, title, c->now - seconds, c->now, 0);
  argv_add(&a, "--lower-limit=0");
  argv_add(&a, "DEF:m=%s:measured:AVERAGE", erd);
  size_t drawn = 0;
  for (size_t k = 0; k < nkeys; k++) {
    char epath[1300];
    if (web_graph_path(keys[k].path, epath, sizeof epath) != 0)
      continue;
    /* Compacted so DEF names stay k0..k<drawn-1>. */
    if (drawn != k)
      keys[drawn] = keys[k];
    argv_add(&a, "DEF:k%zu=%s:watts:AVERAGE", drawn++, epath);
  }
  graph_rest(&a, drawn);
  for (size_t k = 0; k < drawn && k < MAX_STACKED; k++) {
    char legend[LEGEND_CHARS * 5 + 8];
    web_graph_text(keys[k].label, legend, sizeof legend, LEGEND_CHARS, 1);
    argv_add(&a, "AREA:k%zu#%s:%s:STACK", k, palette[k % 12], legend[0] ? legend : "(empty)");
  }
  if (drawn > MAX_STACKED)
    graph_other(&a, MAX_STACKED, drawn);
  argv_add(&a, "LINE2:m#000000:measured");
  return graph_finish(&a, file, why, whylen);
}

/* Cluster total: nodes stacked (named when few), their sum as a line. */
int web_graph_total(const struct web_ctx *c, const char *const *nodes, size_t n, size_t r,
                    char *why, size_t whylen) {
  struct argv_buf a = {.n = 0};
  char file[1200], title[64];
  snprintf(file, sizeof file, "%s/total-%s.%s", c->www, web_ranges[r].name, c->ext);
  if (web_graph_fresh(file, c->now, web_ranges[r].seconds, 0))
    return 0;
  snprintf(title, sizeof title, "cluster power, last %s", web_ranges[r].name);
  graph_begin(&a, c, file, title, c->now - web_ranges[r].seconds, c->now, 0);
  argv_add(&a, "--lower-limit=0");
  char *rpn = NULL;
  size_t len = 0, drawn = 0;
  FILE *f = open_memstream(&rpn, &len);
  if (!f) {
    argv_free(&a);
    return -1;
  }
  fprintf(f, "CDEF:total=");
  for (size_t i = 0; i < n; i++) {
    char rrd[1100], erd[1200], legend[LEGEND_CHARS * 5 + 8];
    if (erg_store_node_path(c->st, nodes[i], rrd, sizeof rrd) != 0 || !web_file_exists(rrd) ||
        web_graph_path(rrd, erd, sizeof erd) != 0)
      continue;
    argv_add(&a, "DEF:n%zu=%s:measured:AVERAGE", i, erd);
    web_graph_text(nodes[i], legend, sizeof legend, LEGEND_CHARS, 1);
    if (n <= MAX_TOTAL_NODES)
      argv_add(&a, "AREA:n%zu#%s:%s:STACK", i, palette[drawn % 12], legend[0] ? legend : "(empty)");
    fprintf(f, drawn ? ",n%zu,ADDNAN" : "n%zu", i);
    drawn++;
  }
  fclose(f);
  if (drawn) {
    argv_add(&a, "%s", rpn);
    argv_add(&a, "LINE2:total#000000:total measured");
  } else {
    argv_add(&a, "HRULE:0#000000:no data yet");
  }
  free(rpn);
  return graph_finish(&a, file, why, whylen);
}

/* Model quality: measured and modelled lines (cells estimated for lack of
 * a PDU reading shaded: there measured is the model), or the residual
 * measured − modelled over the cells with a real reading. */
int web_graph_model(const struct web_ctx *c, const char *erd, const char *file, const char *title,
                    long seconds, int residual, int has_data, char *why, size_t whylen) {
  struct argv_buf a = {.n = 0};
  graph_begin(&a, c, file, title, c->now - seconds, c->now, 0);
  argv_add(&a, "DEF:m=%s:measured:AVERAGE", erd);
  argv_add(&a, "DEF:p=%s:modelled:AVERAGE", erd);
  argv_add(&a, "DEF:e=%s:estimated:AVERAGE", erd);
  if (residual) {
    argv_add(&a, "CDEF:res=e,0.5,GT,UNKN,m,p,-,IF");
    argv_add(&a, "CDEF:absres=res,ABS");
    argv_add(&a, "VDEF:bias=res,AVERAGE");
    argv_add(&a, "VDEF:mae=absres,AVERAGE");
    argv_add(&a, "AREA:res#d62728:measured − modelled");
    argv_add(&a, "HRULE:0#000000");
    if (has_data) {
      argv_add(&a, "GPRINT:bias:mean %%.1lf W");
      argv_add(&a, "GPRINT:mae:mean |residual| %%.1lf W\\l");
    } else {
      argv_add(&a, "COMMENT:no modelled values in this range yet\\l");
    }
  } else {
    argv_add(&a, "--lower-limit=0");
    argv_add(&a, "CDEF:est=e,0.5,GT,m,UNKN,IF");
    argv_add(&a, "AREA:est#f3d6d6:estimated (no PDU reading)");
    argv_add(&a, "LINE2:m#000000:measured");
    argv_add(&a, "LINE2:p#1f4fd8:modelled (dashed):dashes=6,4");
  }
  return graph_finish(&a, file, why, whylen);
}

/* One job: its power on each node it ran on, stacked, and the cluster
 * archive's total as a line, over [end-seconds, end]. */
int web_graph_job(const struct web_ctx *c, const struct web_job *j, const char *const *nodes,
                  size_t nnodes, const char *file, long seconds, int64_t end, char *why,
                  size_t whylen) {
  struct argv_buf a = {.n = 0};
  char title[400], ejob[1300];
  snprintf(title, sizeof title, "job %.200s: power by node", j->key.orig);
  graph_begin(&a, c, file, title, end - seconds, end, 0);
  argv_add(&a, "--lower-limit=0");
  size_t drawn = 0;
  for (size_t i = 0; i < nnodes; i++) {
    char path[1200], epath[1300], legend[LEGEND_CHARS * 5 + 8];
    if (!j->on_node || !j->on_node[i] ||
        erg_store_key_path(c->st, nodes[i], "job", j->key.orig, path, sizeof path) != 0 ||
        web_graph_path(path, epath, sizeof epath) != 0)
      continue;
    web_graph_text(nodes[i], legend, sizeof legend, LEGEND_CHARS, 1);
    argv_add(&a, "DEF:n%zu=%s:watts:AVERAGE", i, epath);
    argv_add(&a, "AREA:n%zu#%s:%s:STACK", i, palette[drawn++ % 12], legend[0] ? legend : "(empty)");
  }
  if (web_graph_path(j->key.path, ejob, sizeof ejob) != 0) {
    argv_free(&a);
    snprintf(why, whylen, "job archive %.300s cannot be drawn (backslash)", j->key.path);
    return -1;
  }
  argv_add(&a, "DEF:t=%s:watts:AVERAGE", ejob);
  argv_add(&a, "LINE2:t#000000:job total (all nodes)");
  return graph_finish(&a, file, why, whylen);
}
