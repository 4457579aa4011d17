/* Static pages: HTML written atomically, graphs rendered by librrd to a
 * temporary name and renamed, so a browser never sees half a file. Data
 * text reaches HTML only through erg_html_escape and rrdgraph arguments
 * only through graph_escape. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rrd.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"

#define MAX_KEYS 64

static const char *const palette[] = {"1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd",
                                      "8c564b", "e377c2", "7f7f7f", "bcbd22", "17becf"};

static const struct { const char *name, *start; } ranges[] = {
    {"10min", "end-600s"}, {"hour", "end-1h"}, {"day", "end-1d"}, {"week", "end-1w"}};

/* rrdgraph splits arguments on ':' and treats '\' as an escape. */
static void graph_escape(const char *in, char *out, size_t outlen) {
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)in; *p && o + 3 < outlen; p++) {
    if (*p == ':' || *p == '\\')
      out[o++] = '\\';
    out[o++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
  }
  out[o] = '\0';
}

struct key_entry {
  char safe[ERG_NAME_MAX];
  char orig[256];
};

/* Reads a kind directory's index.tsv: sanitized name -> original key. */
static size_t pages_read_keys(const char *dir, struct key_entry *keys, size_t max) {
  char path[1200], line[512];
  snprintf(path, sizeof path, "%s/index.tsv", dir);
  FILE *f = fopen(path, "r");
  size_t n = 0;
  while (f && n < max && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab = '\0';
    erg_strlcpy(keys[n].safe, line, sizeof keys[n].safe);
    erg_strlcpy(keys[n].orig, tab + 1, sizeof keys[n].orig);
    n++;
  }
  if (f)
    fclose(f);
  return n;
}

struct argv_buf {
  char *v[4 * MAX_KEYS + 32];
  int n;
};

static void argv_add(struct argv_buf *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void argv_add(struct argv_buf *a, const char *fmt, ...) {
  if (a->n >= (int)(sizeof a->v / sizeof a->v[0]) - 1)
    return;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&a->v[a->n], fmt, ap) >= 0)
    a->n++;
  va_end(ap);
}

static int pages_graph(struct argv_buf *a, const char *png, char *why, size_t whylen) {
  char tmp[1300];
  snprintf(tmp, sizeof tmp, "%s.tmp", png);
  a->v[1] = strdup(tmp);
  rrd_clear_error();
  rrd_info_t *info = rrd_graph_v(a->n, a->v);
  int rc = 0;
  if (!info) {
    snprintf(why, whylen, "graph %s: %s", png, rrd_get_error());
    rc = -1;
  } else {
    rrd_info_free(info);
    rc = rename(tmp, png);
  }
  for (int i = 0; i < a->n; i++)
    free(a->v[i]);
  a->n = 0;
  return rc;
}

static void graph_common(struct argv_buf *a, const char *title, const char *start, int64_t now) {
  argv_add(a, "graph");
  argv_add(a, "(file)");
  argv_add(a, "--imgformat=PNG");
  argv_add(a, "--start=%s", start);
  argv_add(a, "--end=%lld", (long long)now);
  argv_add(a, "--width=720");
  argv_add(a, "--height=220");
  argv_add(a, "--vertical-label=W");
  argv_add(a, "--lower-limit=0");
  argv_add(a, "--title=%s", title);
}

static int pages_node_graphs(const struct erg_store *st, const char *www, const char *node,
                             const char *safe, int64_t now, char *why, size_t whylen) {
  char rrd[1100], erd[1200], dir[1100], title[400], enode[300];
  erg_store_node_path(st, node, rrd, sizeof rrd);
  graph_escape(rrd, erd, sizeof erd);
  graph_escape(node, enode, sizeof enode);
  snprintf(dir, sizeof dir, "%s/nodes/%s/command", erg_store_root(st), safe);
  struct key_entry *keys = calloc(MAX_KEYS, sizeof *keys);
  if (!keys)
    return -1;
  size_t nkeys = pages_read_keys(dir, keys, MAX_KEYS);
  int rc = 0;
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0] && rc == 0; r++) {
    struct argv_buf a = {.n = 0};
    char png[1200];
    snprintf(title, sizeof title, "%s power (last %s)", enode, ranges[r].name);
    graph_common(&a, title, ranges[r].start, now);
    argv_add(&a, "DEF:m=%s:measured:AVERAGE", erd);
    argv_add(&a, "DEF:i=%s:idle:AVERAGE", erd);
    argv_add(&a, "AREA:i#c8c8c8:idle");
    for (size_t k = 0; k < nkeys; k++) {
      char path[1400], epath[1500], legend[600];
      snprintf(path, sizeof path, "%s/%s.rrd", dir, keys[k].safe);
      graph_escape(path, epath, sizeof epath);
      graph_escape(keys[k].orig, legend, sizeof legend);
      argv_add(&a, "DEF:k%zu=%s:watts:AVERAGE", k, epath);
      argv_add(&a, "AREA:k%zu#%s:%s:STACK", k, palette[k % 10], legend);
    }
    argv_add(&a, "LINE2:m#000000:measured");
    snprintf(png, sizeof png, "%s/node-%s-%s.png", www, safe, ranges[r].name);
    rc = pages_graph(&a, png, why, whylen);
  }
  free(keys);
  return rc;
}

static int pages_write(const char *path, char *html, size_t len) {
  int rc = erg_write_file_atomic(path, html, len);
  free(html);
  return rc;
}

static int pages_node_html(const char *www, const char *node, const char *safe, int64_t now) {
  char *buf = NULL, path[1200];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  char *e = erg_html_escape(node);
  fprintf(f, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>erg: %s</title>"
             "<meta http-equiv=\"refresh\" content=\"60\"></head><body>\n"
             "<p><a href=\"index.html\">all nodes</a></p>\n<h1>%s</h1>\n",
          e ? e : "", e ? e : "");
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
    fprintf(f, "<h2>last %s</h2>\n<img src=\"node-%s-%s.png\" alt=\"%s power, last %s\">\n",
            ranges[r].name, safe, ranges[r].name, e ? e : "", ranges[r].name);
  fprintf(f, "<p>Grey: idle power. Colours: power attributed to each command "
             "(stacked). Black: measured. Generated at %lld.</p>\n</body></html>\n",
          (long long)now);
  free(e);
  fclose(f);
  snprintf(path, sizeof path, "%s/node-%s.html", www, safe);
  return pages_write(path, buf, len);
}

static int pages_index(const char *www, const char *const *nodes, size_t n, int64_t now) {
  char *buf = NULL, path[1200];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return -1;
  fprintf(f, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>erg</title>"
             "<meta http-equiv=\"refresh\" content=\"60\"></head><body>\n"
             "<h1>erg: energy per node and process</h1>\n");
  if (n == 0)
    fprintf(f, "<p>No data yet.</p>\n");
  for (size_t i = 0; i < n; i++) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    char *e = erg_html_escape(nodes[i]);
    fprintf(f, "<h2><a href=\"node-%s.html\">%s</a></h2>\n"
               "<a href=\"node-%s.html\"><img src=\"node-%s-10min.png\" alt=\"%s power\"></a>\n",
            safe, e ? e : "", safe, safe, e ? e : "");
    free(e);
  }
  fprintf(f, "<p><a href=\"metrics\">/metrics</a> &middot; generated at %lld</p>\n"
             "</body></html>\n", (long long)now);
  fclose(f);
  snprintf(path, sizeof path, "%s/index.html", www);
  return pages_write(path, buf, len);
}

int erg_web_render(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, char *why, size_t whylen) {
  if (erg_mkdir_p(www_dir, 0755) != 0) {
    snprintf(why, whylen, "cannot create %s", www_dir);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < nnodes; i++) {
    char safe[ERG_NAME_MAX];
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    if (pages_node_graphs(store, www_dir, nodes[i], safe, now, why, whylen) != 0 ||
        pages_node_html(www_dir, nodes[i], safe, now) != 0)
      rc = -1;
  }
  if (pages_index(www_dir, nodes, nnodes, now) != 0) {
    snprintf(why, whylen, "cannot write %s/index.html", www_dir);
    rc = -1;
  }
  return rc;
}
