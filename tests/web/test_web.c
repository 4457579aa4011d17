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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_common.h"
#include "erg_store.h"
#include "erg_web.h"
#include "web_fixture.h"

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

/* Checks one page: no raw <script, every src/href is a plain relative name
 * of an existing file (PNGs valid). Returns the number of references. */
static int check_page(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", www, name);
  char *html = slurp(path, NULL);
  assert_non_null(html);
  assert_null(strcasestr(html, "<script"));
  assert_non_null(strstr(html, "<!doctype html>"));
  int refs = 0;
  for (const char *p = html; (p = strstr(p, "=\"")); p += 2) {
    int is_src = p >= html + 3 && !strncmp(p - 3, "src", 3);
    int is_href = p >= html + 4 && !strncmp(p - 4, "href", 4);
    if (!is_src && !is_href)
      continue;
    char ref[256];
    size_t n = strcspn(p + 2, "\"");
    assert_true(n > 0 && n < sizeof ref);
    memcpy(ref, p + 2, n);
    ref[n] = '\0';
    assert_int_equal(strspn(ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"), n);
    snprintf(path, sizeof path, "%s/%s", www, ref);
    assert_int_equal(access(path, R_OK), 0);
    if (strstr(ref, ".png"))
      assert_true(is_png(path));
    refs++;
  }
  free(html);
  return refs;
}

static void test_render(void **state) {
  (void)state;
  struct erg_store *s;
  char why[512], root[128];
  snprintf(root, sizeof root, "%s/store", dir);
  struct erg_store_options o = {.root = root, .step_seconds = FIX_STEP};
  assert_int_equal(erg_store_open(&s, &o, why, sizeof why), 0);
  if (fixture_fill(s, now, why, sizeof why) != 0)
    fail_msg("fill: %s", why);
  const char *nodes[] = {fix_nodes[0], fix_nodes[1], "ghost"};
  for (int pass = 0; pass < 2; pass++)
    if (erg_web_render(s, www, nodes, 3, now, why, sizeof why) != 0)
      fail_msg("render: %s", why);
  /* index: total graphs, three node boxes, two with a small graph. */
  int refs = check_page("index.html");
  assert_int_equal(refs, 2 + 3 + 2 * 2);
  char path[512], safe[ERG_NAME_MAX];
  snprintf(path, sizeof path, "%s/index.html", www);
  char *idx = slurp(path, NULL);
  assert_non_null(strstr(idx, "&lt;script&gt;alert(1)&lt;/script&gt; rack:2/&quot;b&quot;"));
  free(idx);
  for (size_t i = 0; i < 3; i++) {
    erg_name_sanitize(nodes[i], strlen(nodes[i]), safe);
    snprintf(path, sizeof path, "node-%s.html", safe);
    /* back link + 3 ranges x 2 graphs, or just the back link. */
    assert_int_equal(check_page(path), i < 2 ? 7 : 1);
  }
  /* No temporary file is left behind. */
  DIR *d = opendir(www);
  int files = 0;
  for (struct dirent *e; (e = readdir(d));) {
    assert_null(strstr(e->d_name, ".tmp"));
    files += e->d_name[0] != '.';
  }
  closedir(d);
  /* index + 3 pages + 2 totals + 2 x (small + 6) graphs. */
  assert_int_equal(files, 1 + 3 + 2 + 2 * 7);
  erg_store_close(s);
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
static int dyn_metrics(void *user, const char *url, char **body, size_t *len,
                       const char **ctype) {
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
  assert_int_equal(erg_web_server_start(&w, "example.org:80", www, NULL, NULL, why, sizeof why), -1);
  assert_int_equal(erg_web_server_start(&w, "127.0.0.1:0", www, dyn_metrics,
                                        "erg_up 1\n", why, sizeof why), 0);
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
  assert_string_equal(r.body, "erg_up 1\n");
  assert_non_null(strstr(r.ctype, "version=0.0.4"));
  free(r.body);
  assert_int_equal(dyn_calls, 1);
  expect(port, "HEAD", "/index.html", 200);

  static const char *const bad[] = {
      "/../etc/passwd", "/%2e%2e/etc/passwd", "/%2E%2E/%2E%2E/etc/passwd", "/..%2fsecret.html",
      "/%2e%2e%2fsecret.html", "/up/secret.html", "/evil.html", "/index.html%00.png",
      "/%00", "/./index.html", "/.hidden.html", "//etc/passwd", "/x.rrd", "/css",
      "/css/", "/fifo.html", "/nope.html", "/index.html/", "/a%20b.html", "/index.HTML",
      "/..\\..\\etc\\passwd", "http://127.0.0.1/../../etc/passwd", "/metrics/../index.html"};
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

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_render), cmocka_unit_test(test_http)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
