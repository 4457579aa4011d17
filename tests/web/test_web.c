// SPDX-License-Identifier: GPL-3.0-or-later
/* Pages rendered from a real store (root path with a ':' in it, hostile
 * node and key names) and served by the real HTTP server, read with a raw
 * socket client: no data text reaches HTML unescaped, every image and link
 * a page holds is a file that was written (PNGs are PNGs), and the server
 * serves nothing outside www_dir. */
#include <arpa/inet.h>
#include <dirent.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"
#include "web_fixture.h"
#include "web_int.h" /* web_read_keys */

static char dir[64], www[128];
static int64_t now;

static int setup(void **state) {
  (void)state;
  strcpy(dir, "/tmp/erg-web:XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(www, sizeof www, "%s/www", dir);
  now = (int64_t)time(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  if (len)
    *len = (size_t)n;
  return buf;
}

static int is_png(const char *path) {
  static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  size_t len = 0;
  char *b = slurp(path, &len);
  int ok = b && len > 100 && !memcmp(b, magic, 8);
  free(b);
  return ok;
}

/* An SVG from librrd (cairo): XML with an <svg> root, text as glyphs, so
 * no data text (and no script) inside. */
static int is_svg(const char *path) {
  size_t len = 0;
  char *b = slurp(path, &len);
  int ok = b && len > 100 && !strncmp(b, "<?xml", 5) && strstr(b, "<svg") &&
           !strcasestr(b, "<script") && !strcasestr(b, "onerror");
  free(b);
  return ok;
}

#define MAX_REFS 256
struct crawl {
  const char *www;
  char refs[MAX_REFS][128]; /* every file referenced, index.html first */
  size_t nrefs, pages;
};

static int crawl_has(const struct crawl *c, const char *ref) {
  for (size_t i = 0; i < c->nrefs; i++)
    if (!strcmp(c->refs[i], ref))
      return 1;
  return 0;
}

/* Checks one page: no raw <script or hostile <img, every src/href is a
 * plain relative name of an existing file (images valid); new references
 * are added to the crawl. */
static void check_page(struct crawl *c, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", c->www, name);
  char *html = slurp(path, NULL);
  if (!html)
    fail_msg("page %s missing", name);
  assert_null(strcasestr(html, "<script"));
  assert_null(strcasestr(html, "<img src=x"));
  assert_non_null(strstr(html, "<!doctype html>"));
  c->pages++;
  for (const char *p = html; (p = strstr(p, "=\"")); p += 2) {
    int is_src = p >= html + 3 && !strncmp(p - 3, "src", 3);
    int is_href = p >= html + 4 && !strncmp(p - 4, "href", 4);
    if (!is_src && !is_href)
      continue;
    char ref[128];
    size_t n = strcspn(p + 2, "\"");
    assert_true(n > 0 && n < sizeof ref);
    memcpy(ref, p + 2, n);
    ref[n] = '\0';
    assert_int_equal(
        strspn(ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"), n);
    snprintf(path, sizeof path, "%s/%s", c->www, ref);
    if (access(path, R_OK) != 0)
      fail_msg("%s: reference %s does not exist", name, ref);
    if (strstr(ref, ".png"))
      assert_true(is_png(path));
    if (strstr(ref, ".svg") && !is_svg(path))
      fail_msg("%s is not a clean SVG", ref);
    if (!crawl_has(c, ref)) {
      assert_true(c->nrefs < MAX_REFS);
      snprintf(c->refs[c->nrefs++], sizeof c->refs[0], "%s", ref);
    }
  }
  free(html);
}

/* From index.html through every page it leads to; then every file in www
 * must have been reached (nothing written that no page shows). */
static void crawl_www(struct crawl *c, size_t want_pages, size_t want_files) {
  c->nrefs = 1;
  c->pages = 0;
  snprintf(c->refs[0], sizeof c->refs[0], "index.html");
  for (size_t i = 0; i < c->nrefs; i++)
    if (strstr(c->refs[i], ".html"))
      check_page(c, c->refs[i]);
  if (c->pages != want_pages)
    fail_msg("%s: %zu pages, want %zu", c->www, c->pages, want_pages);
  DIR *d = opendir(c->www);
  size_t files = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    assert_null(strstr(e->d_name, ".tmp"));
    if (!crawl_has(c, e->d_name))
      fail_msg("%s/%s: written but not linked", c->www, e->d_name);
    files++;
  }
  closedir(d);
  if (files != want_files)
    fail_msg("%s: %zu files, want %zu", c->www, files, want_files);
}

static int file_has(const char *www_dir, const char *name, const char *needle) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", www_dir, name);
  char *b = slurp(path, NULL);
  int ok = b && strstr(b, needle);
  free(b);
  return ok;
}

/* Pages: index + per data node 5 ranges + model, ghost 1, jobs 2.
 * Files: those + 5 totals + per data node small, 5 power, 3 kinds (job,
 * command, user) x 5, 3 x 2 model graphs; per job 4. */
#define WANT_PAGES (1 + 2 * 6 + 1 + FIX_NJOBS)
#define WANT_FILES (WANT_PAGES + 5 + 2 * (1 + 5 + 15 + 6) + FIX_NJOBS * 4)

static void test_render(void **state) {
  (void)state;
  struct erg_store *s;
  char why[512], root[128], www_svg[160];
  snprintf(root, sizeof root, "%s/store", dir);
  struct erg_store_options o = {.root = root, .step_seconds = FIX_STEP};
  assert_int_equal(erg_store_open(&s, &o, why, sizeof why), 0);
  if (fixture_fill(s, now, why, sizeof why) != 0)
    fail_msg("fill: %s", why);
  const char *nodes[] = {fix_nodes[0], fix_nodes[1], "ghost"};
  /* The second pass redraws only graphs older than ~2 pixels of their
   * range: both graphs below are made 100 s old, which is stale for the
   * hour (10 s) but fresh for the day (240 s). */
  struct erg_web_options in_process = {.isolate = 0}; /* so ASan sees the render */
  char hour_png[300], day_png[300];
  snprintf(hour_png, sizeof hour_png, "%s/nodeg-command-hour-n1.png", www);
  snprintf(day_png, sizeof day_png, "%s/nodeg-command-day-n1.png", www);
  for (int pass = 0; pass < 2; pass++) {
    if (erg_web_render_opts(s, www, nodes, 3, now, &in_process, why, sizeof why) != 0)
      fail_msg("render: %s", why);
    struct timeval old[2] = {{.tv_sec = (time_t)(now - 100)}, {.tv_sec = (time_t)(now - 100)}};
    if (pass == 0)
      assert_int_equal(utimes(hour_png, old) | utimes(day_png, old), 0);
  }
  struct stat sh, sd;
  assert_int_equal(stat(hour_png, &sh) | stat(day_png, &sd), 0);
  assert_true(sh.st_mtime >= (time_t)now - 5);     /* redrawn */
  assert_true(sd.st_mtime == (time_t)(now - 100)); /* kept */
  static struct crawl c;
  c.www = www;
  crawl_www(&c, WANT_PAGES, WANT_FILES);
  assert_true(
      file_has(www, "index.html", "&lt;script&gt;alert(1)&lt;/script&gt; rack:2/&quot;b&quot;"));
  assert_true(
      file_has(www, "index.html", "&lt;img src=x onerror=alert(1)&gt; ../../j:1 &quot;q&quot;"));
  assert_true(file_has(www, "index.html", "href=\"job-job-42.html\""));
  assert_true(file_has(www, "job-job-42.html", ">n1</a>"));
  assert_true(file_has(www, "job-job-42.html", "rack:2/&quot;b&quot;</a>"));
  /* The model page shows the file's held-out metrics and live ones. */
  assert_true(file_has(www, "model-n1.html", "<th>MAE</th><td class=\"n\">3.25 W"));
  assert_true(file_has(www, "model-n1.html", "<th>R²</th><td class=\"n\">0.93"));
  assert_true(file_has(www, "model-n1.html", "cpu_seconds_per_second"));
  /* Live: measured − modelled is 2 W on cells with a reading. */
  assert_true(
      file_has(www, "model-n1.html", "<th>bias (measured − modelled)</th><td class=\"n\">2 W"));
  char safe2[ERG_NAME_MAX], name[200];
  erg_name_sanitize(fix_nodes[1], strlen(fix_nodes[1]), safe2);
  /* Top nodes by the day's measured energy: n1 (17 keys of load) before
   * the other node (2), the hostile name escaped in its row. */
  char path[512], link2[200];
  snprintf(path, sizeof path, "%s/index.html", www);
  char *idx = slurp(path, NULL);
  assert_non_null(idx);
  char *top = strstr(idx, "<h2>top nodes, last day</h2>");
  assert_non_null(top);
  snprintf(link2, sizeof link2, "<a href=\"node-day-%s.html\">&lt;script&gt;", safe2);
  char *r1 = strstr(top, "<a href=\"node-day-n1.html\">n1</a>"), *r2 = strstr(top, link2);
  assert_true(r1 && r2 && r1 < r2);
  /* Energy in a unit that fits its size: the day's 20 minutes are Wh,
   * not "0.0xx kWh" (issue 25). */
  assert_non_null(strstr(top, " Wh on 2 node(s)"));
  char *jobs_top = strstr(idx, "<h2>top jobs, last day</h2>");
  assert_non_null(jobs_top);
  /* One unit per column, named in its header (issue 36): no row in J
   * beside one in Wh; times as dates, not unix seconds. */
  assert_non_null(strstr(top, "<th>energy (Wh)</th>"));
  assert_non_null(strstr(jobs_top, "<th>energy (Wh)</th>"));
  assert_non_null(strstr(jobs_top, "<th>last energy</th>"));
  assert_null(strstr(jobs_top, " J</td>"));
  assert_null(strstr(jobs_top, " Wh</td>"));
  assert_null(strstr(idx, "kWh"));
  assert_null(strstr(idx, "unix time"));
  assert_non_null(strstr(idx, "<p>Generated 20"));
  assert_non_null(strstr(idx, "reloads every 60 s"));
  free(idx);
  /* The model's idle power is from its recorded idle profile, not fitted;
   * the node shares a meter: said on its model and node pages, escaped. */
  assert_true(file_has(www, "model-n1.html", "idle 80.0 W (recorded idle profile, 120 cells)"));
  assert_true(file_has(www, "model-n1.html",
                       "power: share of shared meter pdu-&lt;7&gt; (split by model)"));
  assert_true(file_has(www, "node-day-n1.html",
                       "power: share of shared meter pdu-&lt;7&gt; (split by model)"));
  snprintf(name, sizeof name, "model-%s.html", safe2);
  assert_true(file_has(www, name, "No usable model file"));

  /* The same as SVG, in its own directory. */
  snprintf(www_svg, sizeof www_svg, "%s/www-svg", dir);
  struct erg_web_options wo = {.image_format = "svg"};
  if (erg_web_render_opts(s, www_svg, nodes, 3, now, &wo, why, sizeof why) != 0)
    fail_msg("render svg: %s", why);
  c.www = www_svg;
  crawl_www(&c, WANT_PAGES, WANT_FILES);
  assert_true(file_has(www_svg, "index.html", "src=\"total-day.svg\""));

  /* Rendered in a forked child (ergd): the same pages; a failure's reason
   * comes back from the child. */
  char www_iso[160], bad_www[200];
  snprintf(www_iso, sizeof www_iso, "%s/www-iso", dir);
  struct erg_web_options io = {.isolate = 1};
  if (erg_web_render(s, www_iso, nodes, 3, now, why, sizeof why) != 0)
    fail_msg("render isolated: %s", why);
  c.www = www_iso;
  crawl_www(&c, WANT_PAGES, WANT_FILES);
  snprintf(bad_www, sizeof bad_www, "%s/www-iso/index.html/sub", dir);
  why[0] = '\0';
  assert_int_equal(erg_web_render_opts(s, bad_www, nodes, 3, now, &io, why, sizeof why), -1);
  assert_non_null(strstr(why, "cannot create"));

  /* Breakdowns read only keys written within (range + slack): one key's
   * archive made 3 days old drops out of the hour's keys, not the year's. */
  static struct web_key keys[WEB_MAX_KEYS];
  char kdir[1200], kpath[1300];
  assert_int_equal(erg_store_kind_dir(s, fix_nodes[0], "command", kdir, sizeof kdir), 0);
  assert_int_equal(erg_store_key_path(s, fix_nodes[0], "command", "k07", kpath, sizeof kpath), 0);
  struct timeval old3d[2] = {{.tv_sec = (time_t)(now - 3 * 86400)},
                             {.tv_sec = (time_t)(now - 3 * 86400)}};
  assert_int_equal(utimes(kpath, old3d), 0);
  assert_int_equal(web_read_keys(kdir, now - 7200, keys, WEB_MAX_KEYS), FIX_NKEYS - 1);
  assert_int_equal(web_read_keys(kdir, now - 366 * 86400, keys, WEB_MAX_KEYS), FIX_NKEYS);
  assert_int_equal(web_read_keys(kdir, now - 7200, keys, 3), 3);
  erg_store_close(s);
}

/* One function prints energy for people: its unit follows the magnitude. */
static void test_energy_text(void **state) {
  (void)state;
  static const struct {
    double joules;
    const char *text;
  } cases[] = {{0, "0 J"},          {0.5, "0.50 J"},       {12.34, "12.3 J"},
               {812, "812 J"},      {3599, "3599 J"},      {3600, "1.00 Wh"},
               {88200, "24.5 Wh"},  {3599800, "1.00 kWh"}, {8.748e6, "2.43 kWh"},
               {3.6e9, "1.00 MWh"}, {4.5e13, "12500 MWh"}, {-7200, "-2.00 Wh"},
               {NAN, "–"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char out[32];
    erg_energy_text(cases[i].joules, out, sizeof out);
    if (strcmp(out, cases[i].text))
      fail_msg("%g J: '%s', want '%s'", cases[i].joules, out, cases[i].text);
  }
}

/* ---- HTTP ---- */

struct reply {
  int status;
  char ctype[128];
  char *body;
  size_t len;
};

/* Sends the request line verbatim (no client-side normalisation). */
static void http_raw(unsigned port, const char *method, const char *target, struct reply *r) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  char req[1024];
  int n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method, target);
  assert_int_equal(write(fd, req, (size_t)n), n);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  for (ssize_t k; (k = read(fd, buf + len, cap - len - 1)) > 0;) {
    len += (size_t)k;
    if (len + 1 == cap)
      buf = realloc(buf, cap *= 2);
  }
  close(fd);
  buf[len] = '\0';
  memset(r, 0, sizeof *r);
  assert_int_equal(sscanf(buf, "HTTP/1.%*d %d", &r->status), 1);
  char *ct = strcasestr(buf, "\r\nContent-Type: ");
  if (ct)
    sscanf(ct + 16, "%127[^\r]", r->ctype);
  char *body = strstr(buf, "\r\n\r\n");
  assert_non_null(body);
  r->len = len - (size_t)(body + 4 - buf);
  r->body = malloc(r->len + 1);
  memcpy(r->body, body + 4, r->len + 1);
  free(buf);
}

static int expect(unsigned port, const char *method, const char *target, int status) {
  struct reply r;
  http_raw(port, method, target, &r);
  if (r.status != status)
    fail_msg("%s %s: got %d, want %d", method, target, r.status, status);
  int ok = r.status == status;
  free(r.body);
  return ok;
}

static int dyn_calls;
static int dyn_metrics(void *user, const char *url, char **body, size_t *len, const char **ctype) {
  assert_string_equal(url, "/metrics");
  dyn_calls++;
  *body = strdup((const char *)user);
  *len = strlen(*body);
  *ctype = "text/plain; version=0.0.4";
  return 200;
}

static void test_http(void **state) {
  (void)state;
  struct erg_web_server *w;
  char why[256], path[512];
  assert_int_equal(access(www, F_OK), 0); /* rendered by test_render */
  /* Bait outside www and links that lead there. */
  snprintf(path, sizeof path, "%s/secret.html", dir);
  assert_int_equal(erg_write_file_atomic(path, "secret", 6), 0);
  char link[512], sub[512];
  snprintf(link, sizeof link, "%s/evil.html", www);
  assert_int_equal(symlink(path, link), 0);
  snprintf(link, sizeof link, "%s/up", www);
  assert_int_equal(symlink(dir, link), 0);
  snprintf(sub, sizeof sub, "%s/css", www);
  assert_int_equal(mkdir(sub, 0755), 0);
  snprintf(path, sizeof path, "%s/css/a.css", www);
  assert_int_equal(erg_write_file_atomic(path, "b{}", 3), 0);
  snprintf(path, sizeof path, "%s/x.rrd", www);
  assert_int_equal(erg_write_file_atomic(path, "x", 1), 0);
  snprintf(path, sizeof path, "%s/fifo.html", www);
  assert_int_equal(mkfifo(path, 0644), 0);

  assert_int_equal(erg_web_server_start(&w, "127.0.0.1:abc", www, NULL, NULL, why, sizeof why), -1);
  assert_int_equal(erg_web_server_start(&w, "example.org:80", www, NULL, NULL, why, sizeof why),
                   -1);
  assert_int_equal(
      erg_web_server_start(&w, "127.0.0.1:0", www, dyn_metrics, "erg_up 1\n", why, sizeof why), 0);
  unsigned port = erg_web_server_port(w);
  assert_true(port > 0);

  struct reply r;
  http_raw(port, "GET", "/", &r);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.ctype, "text/html"));
  assert_non_null(strstr(r.body, "<h1>erg"));
  free(r.body);
  http_raw(port, "GET", "/total-hour.png", &r);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.ctype, "image/png");
  assert_true(r.len > 100 && !memcmp(r.body, "\x89PNG\r\n\x1a\n", 8));
  free(r.body);
  http_raw(port, "GET", "/css/a.css", &r);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.ctype, "text/css"));
  free(r.body);
  http_raw(port, "GET", "/metrics", &r);
  assert_int_equal(r.status, 200);
  /* The handler's body, then the server's own families (erg_http_*). */
  assert_memory_equal(r.body, "erg_up 1\n", 9);
  assert_non_null(strstr(r.body, "\nerg_http_refused_total{reason=\"per_ip_limit\"} 0\n"));
  assert_non_null(strstr(r.ctype, "version=0.0.4"));
  free(r.body);
  assert_int_equal(dyn_calls, 1);
  expect(port, "HEAD", "/index.html", 200);
  /* A sanitized name keeps dots: ".." inside a file name is no traversal. */
  char safe[ERG_NAME_MAX], target[200];
  erg_name_sanitize(fix_jobs[1], strlen(fix_jobs[1]), safe);
  assert_non_null(strstr(safe, ".."));
  snprintf(target, sizeof target, "/job-%s.html", safe);
  expect(port, "GET", target, 200);
  expect(port, "GET", "/job-..html", 404);

  static const char *const bad[] = {"/../etc/passwd",
                                    "/%2e%2e/etc/passwd",
                                    "/%2E%2E/%2E%2E/etc/passwd",
                                    "/..%2fsecret.html",
                                    "/%2e%2e%2fsecret.html",
                                    "/up/secret.html",
                                    "/evil.html",
                                    "/index.html%00.png",
                                    "/%00",
                                    "/./index.html",
                                    "/css/../index.html",
                                    "/css/..",
                                    "/..",
                                    "/.hidden.html",
                                    "//etc/passwd",
                                    "/x.rrd",
                                    "/css",
                                    "/css/",
                                    "/fifo.html",
                                    "/nope.html",
                                    "/index.html/",
                                    "/a%20b.html",
                                    "/index.HTML",
                                    "/..\\..\\etc\\passwd",
                                    "http://127.0.0.1/../../etc/passwd",
                                    "/metrics/../index.html"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    expect(port, "GET", bad[i], 404);
  expect(port, "POST", "/index.html", 405);
  expect(port, "PUT", "/index.html", 405);
  erg_web_server_stop(w);

  /* Without a dynamic handler /metrics is just a (missing) file. */
  assert_int_equal(erg_web_server_start(&w, "localhost:0", www, NULL, NULL, why, sizeof why), 0);
  expect(erg_web_server_port(w), "GET", "/metrics", 404);
  expect(erg_web_server_port(w), "GET", "/", 200);
  erg_web_server_stop(w);
}

int main(int argc, char **argv) {
  /* erg_web_render (isolate) runs this program as its render process. */
  if (argc > 1 && !strcmp(argv[1], ERG_WEB_RENDER_ARG))
    return erg_web_render_child_main(argc, argv);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_energy_text),
                                     cmocka_unit_test(test_render), cmocka_unit_test(test_http)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
