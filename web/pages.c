/* Static pages: HTML written atomically, graphs rendered by librrd to a
 * temporary name and renamed, so a browser never sees half a file. Data
 * text reaches HTML only through erg_html_escape and rrdgraph arguments
 * only through graph_text / graph_path. Every link and image a page holds
 * is a relative name of a file written in the same render. */
#include <errno.h>
#include <math.h>
#include <rrd.h>
#include <rrd_client.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"

#define MAX_KEYS 256     /* keys read from one index.tsv */
#define MAX_STACKED 12   /* keys drawn on their own; the rest add up to "other" */
#define MAX_TOTAL_NODES 16
#define LEGEND_CHARS 48

static const char *const palette[] = {"1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd",
                                      "8c564b", "e377c2", "bcbd22", "17becf", "aec7e8",
                                      "ffbb78", "98df8a"};

static const struct {
  const char *name, *start;
  long seconds;
} ranges[] = {{"hour", "end-1h", 3600}, {"day", "end-1d", 86400}, {"week", "end-1w", 604800}};
#define NRANGES (sizeof ranges / sizeof ranges[0])

/* ---- text for rrdgraph ---- */

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p) {
  size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
             : (*p & 0xf8) == 0xf0 ? 4 : 0;
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
static void graph_text(const char *in, char *out, size_t outlen, size_t maxchars, int legend) {
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
static int graph_path(const char *in, char *out, size_t outlen) {
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

/* ---- keys of a node ---- */

struct key_entry {
  char path[1200];    /* archive */
  char orig[256];     /* original key as kept in index.tsv */
  double mean_watts;  /* over the range being drawn, for ordering */
};

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reads a kind directory's index.tsv; keeps keys whose archive exists. */
static size_t pages_read_keys(const char *dir, struct key_entry *keys, size_t max) {
  char path[1200], line[1024];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  size_t n = 0;
  while (f && n < max && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab = '\0';
    /* The index is data too: only a sanitized name may become a path. */
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(line, strlen(line), safe);
    if (strcmp(safe, line) != 0)
      continue;
    snprintf(keys[n].path, sizeof keys[n].path, "%s/%s.rrd", dir, safe);
    if (!file_exists(keys[n].path))
      continue;
    erg_strlcpy(keys[n].orig, tab + 1, sizeof keys[n].orig);
    n++;
  }
  if (f)
    fclose(f);
  return n;
}

/* Mean of the archive's first DS over [now-seconds, now]; 0 if unknown. */
static double pages_key_mean(const char *daemon, const char *path, int64_t now, long seconds) {
  time_t start = (time_t)(now - seconds), end = (time_t)now;
  unsigned long step = 0, nds = 0;
  char **names = NULL;
  rrd_value_t *data = NULL;
  if (daemon)
    rrdc_flush_if_daemon(daemon, path);
  rrd_clear_error();
  if (rrd_fetch_r(path, "AVERAGE", &start, &end, &step, &nds, &names, &data) != 0)
    return 0;
  double sum = 0;
  unsigned long rows = step ? (unsigned long)(end - start) / step : 0, known = 0;
  for (unsigned long r = 0; nds && r < rows; r++)
    if (!isnan(data[r * nds])) {
      sum += data[r * nds];
      known++;
    }
  for (unsigned long i = 0; i < nds; i++)
    free(names[i]);
  free(names);
  free(data);
  return known ? sum / (double)known : 0;
}

static int key_cmp(const void *a, const void *b) {
  double x = ((const struct key_entry *)a)->mean_watts, y = ((const struct key_entry *)b)->mean_watts;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* ---- rrd_graph_v ---- */

struct argv_buf {
  char *v[2 * MAX_KEYS + 64];
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

static void graph_begin(struct argv_buf *a, const struct erg_store *st, const char *png,
                        const char *title, const char *start, int64_t now, int small) {
  char t[400];
  graph_text(title, t, sizeof t, 120, 0);
  argv_add(a, "graph");
  argv_add(a, "%s.tmp", png);
  argv_add(a, "--imgformat=PNG");
  argv_add(a, "--start=%s", start);
  argv_add(a, "--end=%lld", (long long)now);
  argv_add(a, "--width=%d", small ? 360 : 720);
  argv_add(a, "--height=%d", small ? 100 : 220);
  argv_add(a, "--vertical-label=W");
  argv_add(a, "--lower-limit=0");
  argv_add(a, "--title=%s", t);
  /* rrdcached holds recent updates: flush the files drawn first. */
  if (erg_store_daemon(st))
    argv_add(a, "--daemon=%s", erg_store_daemon(st));
  if (small)
    argv_add(a, "--no-legend");
}

/* Renders to png.tmp and renames; frees the arguments. rrd_graph_v
 * permutes argv (getopt), so the temporary name is kept aside. */
static int graph_finish(struct argv_buf *a, const char *png, char *why, size_t whylen) {
  char tmp[1300];
  int rc = 0;
  snprintf(tmp, sizeof tmp, "%s.tmp", png);
  if (a->overflow) {
    snprintf(why, whylen, "graph %s: too many arguments", png);
    rc = -1;
  } else {
    rrd_clear_error();
    rrd_info_t *info = rrd_graph_v(a->n, a->v);
    if (!info) {
      snprintf(why, whylen, "graph %s: %s", png, rrd_get_error());
      rc = -1;
    } else {
      rrd_info_free(info);
      if (rename(tmp, png) != 0) {
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

/* (a) measured vs modelled, with idle and dynamic power. */
static int graph_power(const struct erg_store *st, const char *erd, const char *png,
                       const char *title, size_t r, int64_t now, int small, char *why,
                       size_t whylen) {
  struct argv_buf a = {.n = 0};
  graph_begin(&a, st, png, title, ranges[r].start, now, small);
  argv_add(&a, "DEF:m=%s:measured:AVERAGE", erd);
  argv_add(&a, "DEF:p=%s:modelled:AVERAGE", erd);
  argv_add(&a, "DEF:i=%s:idle:AVERAGE", erd);
  argv_add(&a, "DEF:d=%s:dynamic:AVERAGE", erd);
  argv_add(&a, "AREA:i#d0d0d0:idle");
  argv_add(&a, "AREA:d#ffb366:dynamic:STACK");
  argv_add(&a, "LINE1:p#1f4fd8:modelled");
  argv_add(&a, "LINE2:m#000000:measured");
  return graph_finish(&a, png, why, whylen);
}

/* (b) idle, then the node's command keys stacked, then measured on top. */
static int graph_commands(const struct erg_store *st, const char *erd, struct key_entry *keys,
                          size_t nkeys, const char *png, const char *title, size_t r,
                          int64_t now, char *why, size_t whylen) {
  struct argv_buf a = {.n = 0};
  const char *daemon = erg_store_daemon(st);
  for (size_t k = 0; k < nkeys; k++)
    keys[k].mean_watts = pages_key_mean(daemon, keys[k].path, now, ranges[r].seconds);
  qsort(keys, nkeys, sizeof *keys, key_cmp);
  graph_begin(&a, st, png, title, ranges[r].start, now, 0);
  argv_add(&a, "DEF:i=%s:idle:AVERAGE", erd);
  argv_add(&a, "DEF:m=%s:measured:AVERAGE", erd);
  argv_add(&a, "AREA:i#d0d0d0:idle");
  for (size_t k = 0; k < nkeys; k++) {
    char epath[1300];
    if (graph_path(keys[k].path, epath, sizeof epath) != 0)
      continue;
    argv_add(&a, "DEF:k%zu=%s:watts:AVERAGE", k, epath);
  }
  for (size_t k = 0; k < nkeys && k < MAX_STACKED; k++) {
    char legend[LEGEND_CHARS * 5 + 8];
    graph_text(keys[k].orig, legend, sizeof legend, LEGEND_CHARS, 1);
    argv_add(&a, "AREA:k%zu#%s:%s:STACK", k, palette[k % 12], legend[0] ? legend : "(empty)");
  }
  if (nkeys > MAX_STACKED) {
    /* The rest as one area: k12,k13,ADDNAN,k14,ADDNAN,... */
    char *rpn = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&rpn, &len);
    if (f) {
      fprintf(f, "CDEF:other=k%d", MAX_STACKED);
      for (size_t k = MAX_STACKED + 1; k < nkeys; k++)
        fprintf(f, ",k%zu,ADDNAN", k);
      fclose(f);
      argv_add(&a, "%s", rpn);
      argv_add(&a, "AREA:other#909090:%zu other keys:STACK", nkeys - MAX_STACKED);
      free(rpn);
    }
  }
  argv_add(&a, "LINE2:m#000000:measured");
  return graph_finish(&a, png, why, whylen);
}

/* Cluster total: nodes stacked (named when few), their sum as a line. */
static int graph_total(const struct erg_store *st, const char *www, const char *const *nodes,
                       size_t n, size_t r, int64_t now, char *why, size_t whylen) {
  struct argv_buf a = {.n = 0};
  char png[1200], title[64];
  snprintf(png, sizeof png, "%s/total-%s.png", www, ranges[r].name);
  snprintf(title, sizeof title, "cluster power, last %s", ranges[r].name);
  graph_begin(&a, st, png, title, ranges[r].start, now, 0);
  char *rpn = NULL;
  size_t len = 0, drawn = 0;
  FILE *f = open_memstream(&rpn, &len);
  if (!f)
    return -1;
  fprintf(f, "CDEF:total=");
  for (size_t i = 0; i < n; i++) {
    char rrd[1100], erd[1200], legend[LEGEND_CHARS * 5 + 8];
    if (erg_store_node_path(st, nodes[i], rrd, sizeof rrd) != 0 || !file_exists(rrd) ||
        graph_path(rrd, erd, sizeof erd) != 0)
      continue;
    argv_add(&a, "DEF:n%zu=%s:measured:AVERAGE", i, erd);
    graph_text(nodes[i], legend, sizeof legend, LEGEND_CHARS, 1);
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
  return graph_finish(&a, png, why, whylen);
}

/* ---- HTML ---- */

static const char *html_head =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<meta http-equiv=\"refresh\" content=\"60\">"
    "<style>body{font-family:sans-serif;margin:1em 2em}img{max-width:100%%}"
    ".node{display:inline-block;margin:0 1em 1em 0}</style>"
    "<title>%s</title></head><body>\n";

static int pages_write(const char *www, const char *name, FILE *f, char **buf, size_t *len) {
  char path[1200];
  int rc = fclose(f);
  snprintf(path, sizeof path, "%s/%s", www, name);
  if (rc == 0)
    rc = erg_write_file_atomic(path, *buf, *len);
  free(*buf);
  return rc;
}

static int pages_node_html(const char *www, const char *node, const char *safe, int have_graphs,
                           int64_t now) {
  char *buf = NULL, name[ERG_NAME_MAX + 16];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  char *e = erg_html_escape(node);
  const char *en = e ? e : "?";
  fprintf(f, html_head, "erg: node");
  fprintf(f, "<p><a href=\"index.html\">all nodes</a></p>\n<h1>node %s</h1>\n", en);
  if (!have_graphs)
    fprintf(f, "<p>No data for this node yet.</p>\n");
  for (size_t r = 0; have_graphs && r < NRANGES; r++) {
    const char *rn = ranges[r].name;
    fprintf(f, "<h2>last %s</h2>\n"
               "<img src=\"node-%s-power-%s.png\" alt=\"%s: measured and modelled power, last %s\">\n"
               "<img src=\"node-%s-command-%s.png\" alt=\"%s: power by command, last %s\">\n",
            rn, safe, rn, en, rn, safe, rn, en, rn);
  }
  fprintf(f, "<p>Power graph: idle (grey) and dynamic (orange) power stacked, modelled "
             "(blue) and measured (black) lines. Command graph: idle, then the power "
             "attributed to each command, stacked; they add up to the measured line. "
             "Generated at %lld (unix time).</p>\n</body></html>\n",
          (long long)now);
  free(e);
  snprintf(name, sizeof name, "node-%s.html", safe);
  return pages_write(www, name, f, &buf, &len);
}

static int pages_index(const char *www, const char *const *nodes, const int *have, size_t n,
                       int64_t now) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  fprintf(f, html_head, "erg: cluster power");
  fprintf(f, "<h1>erg: energy per node and process</h1>\n"
             "<h2>cluster</h2>\n<img src=\"total-hour.png\" alt=\"cluster power, last hour\">\n"
             "<img src=\"total-day.png\" alt=\"cluster power, last day\">\n<h2>nodes</h2>\n");
  if (n == 0)
    fprintf(f, "<p>No data yet.</p>\n");
  for (size_t i = 0; i < n; i++) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    char *e = erg_html_escape(nodes[i]);
    fprintf(f, "<div class=\"node\"><h3><a href=\"node-%s.html\">%s</a></h3>\n", safe,
            e ? e : "?");
    if (have[i])
      fprintf(f, "<a href=\"node-%s.html\"><img src=\"node-%s-small.png\" "
                 "alt=\"%s power, last hour\"></a>\n", safe, safe, e ? e : "?");
    fprintf(f, "</div>\n");
    free(e);
  }
  fprintf(f, "<p>Generated at %lld (unix time).</p>\n</body></html>\n", (long long)now);
  return pages_write(www, "index.html", f, &buf, &len);
}

/* ---- one node ---- */

static int pages_node_graphs(const struct erg_store *st, const char *www, const char *node,
                             const char *safe, const char *rrd, int64_t now, char *why,
                             size_t whylen) {
  char erd[1200], dir[1100], title[400], png[1200];
  if (graph_path(rrd, erd, sizeof erd) != 0) {
    snprintf(why, whylen, "store path %.300s cannot be drawn (backslash)", rrd);
    return -1;
  }
  struct key_entry *keys = calloc(MAX_KEYS, sizeof *keys);
  if (!keys) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  size_t nkeys = 0;
  if (erg_store_kind_dir(st, node, "command", dir, sizeof dir) == 0)
    nkeys = pages_read_keys(dir, keys, MAX_KEYS);
  snprintf(png, sizeof png, "%s/node-%s-small.png", www, safe);
  int rc = graph_power(st, erd, png, node, 0, now, 1, why, whylen);
  for (size_t r = 0; r < NRANGES && rc == 0; r++) {
    snprintf(title, sizeof title, "%s: power, last %s", node, ranges[r].name);
    snprintf(png, sizeof png, "%s/node-%s-power-%s.png", www, safe, ranges[r].name);
    rc = graph_power(st, erd, png, title, r, now, 0, why, whylen);
    if (rc != 0)
      break;
    snprintf(title, sizeof title, "%s: power by command, last %s", node, ranges[r].name);
    snprintf(png, sizeof png, "%s/node-%s-command-%s.png", www, safe, ranges[r].name);
    rc = graph_commands(st, erd, keys, nkeys, png, title, r, now, why, whylen);
  }
  free(keys);
  return rc;
}

int erg_web_render(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, char *why, size_t whylen) {
  if (erg_mkdir_p(www_dir, 0755) != 0) {
    snprintf(why, whylen, "cannot create %s: %s", www_dir, strerror(errno));
    return -1;
  }
  int *have = calloc(nnodes ? nnodes : 1, sizeof *have);
  if (!have) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  /* One failing node does not stop the others; the first reason is kept. */
  int rc = 0;
  char err[512];
  for (size_t i = 0; i < nnodes; i++) {
    char safe[ERG_NAME_MAX], rrd[1100];
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    if (erg_store_node_path(store, nodes[i], rrd, sizeof rrd) == 0 && file_exists(rrd))
      have[i] = pages_node_graphs(store, www_dir, nodes[i], safe, rrd, now, err, sizeof err) == 0;
    if (file_exists(rrd) && !have[i] && rc == 0) {
      snprintf(why, whylen, "%s", err);
      rc = -1;
    }
    if (pages_node_html(www_dir, nodes[i], safe, have[i], now) != 0 && rc == 0) {
      snprintf(why, whylen, "cannot write page of node %s", safe);
      rc = -1;
    }
  }
  for (size_t r = 0; r < 2; r++)
    if (graph_total(store, www_dir, nodes, nnodes, r, now, err, sizeof err) != 0 && rc == 0) {
      snprintf(why, whylen, "%s", err);
      rc = -1;
    }
  if (pages_index(www_dir, nodes, have, nnodes, now) != 0 && rc == 0) {
    snprintf(why, whylen, "cannot write %s/index.html", www_dir);
    rc = -1;
  }
  free(have);
  return rc;
}
