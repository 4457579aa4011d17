// SPDX-License-Identifier: GPL-3.0-or-later
/* The HTTP server under a slow-loris load (issue 23): 300 connections
 * from 127.0.0.2 that send a header line every 2 s and never finish their
 * request must not keep /metrics and pages from other clients (127.0.0.1)
 * for more than a moment; the slow ones are held only up to the per-address
 * limit and cut once their headers are overdue. A query of 1,200 '&' and an
 * overlong URL are answered 414 at once, and every refusal is counted in
 * /metrics. Then (issue 35) 500 slow connections from 16 addresses (32
 * each: within the per-address limit, above the total) that dribble a
 * header byte every 0.3 s and reconnect when cut: /metrics and a page
 * still answer, from another address and from one of theirs. About 20 s. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "erg_common.h"
#include "erg_web.h"

#define NSLOW 300

static double now_s(void) { return erg_time_monotonic_ns() / 1e9; }

static int dial(const char *src, unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET};
  inet_pton(AF_INET, src, &sa.sin_addr);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* One request from 127.0.0.1; the status, or -1 without an answer within
 * timeout_s. The body (when wanted) in a malloc'd string. */
static int get(unsigned port, const char *target, double timeout_s, char **body) {
  int fd = dial("127.0.0.1", port);
  if (fd < 0)
    return -1;
  size_t cap = strlen(target) + 100;
  char *req = malloc(cap);
  int n = snprintf(req, cap, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", target);
  int ok = write(fd, req, (size_t)n) == n;
  free(req);
  size_t len = 0, size = 1 << 16;
  char *buf = malloc(size);
  double until = now_s() + timeout_s;
  while (ok) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int wait_ms = (int)((until - now_s()) * 1000);
    if (wait_ms <= 0 || poll(&p, 1, wait_ms) != 1) {
      ok = 0;
      break;
    }
    if (len + 1 >= size)
      buf = realloc(buf, size *= 2);
    ssize_t r = read(fd, buf + len, size - len - 1);
    if (r <= 0)
      break;
    len += (size_t)r;
  }
  close(fd);
  buf[len] = '\0';
  int status = -1;
  if (!ok || sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
    status = -1;
  if (body)
    *body = buf;
  else
    free(buf);
  return status;
}

/* 1 while the server has not closed fd. */
static int still_open(int fd) {
  char c;
  ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
  return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static double metric(const char *body, const char *series) {
  const char *p = strstr(body, series);
  return p ? strtod(p + strlen(series), NULL) : -1;
}

/* /metrics as ergd serves it: the server adds its own families after it. */
static int dyn_metrics(void *user, const char *url, char **body, size_t *len, const char **ctype) {
  (void)user;
  (void)url;
  *body = strdup("erg_up 1\n");
  *len = strlen(*body);
  *ctype = "text/plain; version=0.0.4";
  return 200;
}

static void test_slow_clients(void **state) {
  (void)state;
  char dir[] = "/tmp/erg-httplim-XXXXXX", path[128], why[256];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/index.html", dir);
  assert_int_equal(erg_write_file_atomic(path, "<p>erg</p>\n", 11), 0);
  int probe = dial("127.0.0.2", 9);
  if (probe < 0 && errno == EADDRNOTAVAIL) {
    fprintf(stderr, "SKIP: no 127.0.0.2 on the loopback\n");
    exit(77);
  }
  if (probe >= 0)
    close(probe);
  struct erg_web_server *w;
  assert_int_equal(erg_web_server_start(&w, "127.0.0.1:0", dir, dyn_metrics, NULL, why, sizeof why),
                   0);
  unsigned port = erg_web_server_port(w);

  static const char head[] = "GET /index.html HTTP/1.1\r\nHost: x\r\n";
  int slow[NSLOW];
  for (int i = 0; i < NSLOW; i++) {
    slow[i] = dial("127.0.0.2", port);
    assert_true(slow[i] >= 0);
    assert_int_equal(write(slow[i], head, sizeof head - 1), (ssize_t)(sizeof head - 1));
  }
  double t0 = now_s();
  /* Others are answered at once, pages and /metrics alike. */
  for (int k = 0; k < 3; k++) {
    double t = now_s();
    assert_int_equal(get(port, "/metrics", 3, NULL), 200);
    assert_int_equal(get(port, "/index.html", 3, NULL), 200);
    assert_true(now_s() - t < 2);
  }
  /* No query of many arguments or overlong URL hangs a client. */
  char q[1400] = "/index.html?";
  memset(q + strlen(q), '&', 1200);
  double t = now_s();
  assert_int_equal(get(port, q, 3, NULL), 414);
  char *longurl = calloc(1, 3000);
  memcpy(longurl, "/index.html?a=", 14);
  memset(longurl + 14, 'a', 2500);
  assert_int_equal(get(port, longurl, 3, NULL), 414);
  free(longurl);
  assert_int_equal(get(port, "/index.html?v=2", 3, NULL), 200); /* a short query is ignored */
  assert_true(now_s() - t < 2);
  /* Only the per-address share of the slow ones is held. */
  sleep(1);
  int held = 0;
  for (int i = 0; i < NSLOW; i++)
    held += still_open(slow[i]);
  assert_true(held > 0 && held <= 32);
  /* The held ones keep sending (MHD's idle timeout never fires) and are
   * cut once their headers are overdue (5 s); pages answer meanwhile. */
  while (now_s() - t0 < 8) {
    for (int i = 0; i < NSLOW; i++)
      if (still_open(slow[i]))
        (void)!send(slow[i], "X-a: b\r\n", 8, MSG_NOSIGNAL);
    assert_int_equal(get(port, "/index.html", 3, NULL), 200);
    sleep(2);
  }
  int left = 0;
  for (int i = 0; i < NSLOW; i++) {
    left += still_open(slow[i]);
    close(slow[i]);
  }
  assert_int_equal(left, 0);
  char *body = NULL;
  assert_int_equal(get(port, "/metrics", 3, &body), 200);
  assert_non_null(strstr(body, "erg_up 1\n"));
  /* Each newcomer over the address's 32 took the place of its oldest. */
  assert_true(metric(body, "erg_http_refused_total{reason=\"evicted\"} ") >= NSLOW - 32);
  assert_true(metric(body, "erg_http_refused_total{reason=\"per_ip_limit\"} ") == 0);
  assert_true(metric(body, "erg_http_refused_total{reason=\"header_timeout\"} ") >= held);
  assert_true(metric(body, "erg_http_refused_total{reason=\"uri_too_long\"} ") == 2);
  assert_true(metric(body, "\nerg_http_connections ") >= 1);
  free(body);
  erg_web_server_stop(w);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  assert_int_equal(system(path), 0);
}

#define ARMY 500
#define ARMY_ADDRS 16

/* A slow connection from 127.0.0.(10 + i % 16) with its request line sent. */
static int army_dial(int i, unsigned port) {
  char src[32];
  snprintf(src, sizeof src, "127.0.0.%d", 10 + i % ARMY_ADDRS);
  int fd = dial(src, port);
  static const char head[] = "GET /index.html HTTP/1.1\r\nHost: x\r\n";
  if (fd >= 0 && write(fd, head, sizeof head - 1) != (ssize_t)(sizeof head - 1)) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* One request from src; 200 within 3 s, or the status. */
static int get_from(const char *src, unsigned port, const char *target) {
  int fd = dial(src, port);
  if (fd < 0)
    return -1;
  char req[200];
  int n =
      snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", target);
  char buf[4096];
  size_t len = 0;
  double until = now_s() + 3;
  int ok = write(fd, req, (size_t)n) == n;
  while (ok && len < sizeof buf - 1) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int wait_ms = (int)((until - now_s()) * 1000);
    if (wait_ms <= 0 || poll(&p, 1, wait_ms) != 1)
      break;
    ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
    if (r <= 0)
      break;
    len += (size_t)r;
  }
  close(fd);
  buf[len] = '\0';
  int status = -1;
  if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
    status = -1;
  return status;
}

static void test_slow_army(void **state) {
  (void)state;
  /* Both ends of ~800 connections are in this process. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
    rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 2 * ARMY + 300) {
    fprintf(stderr, "SKIP: %llu descriptors allowed, %d needed\n", (unsigned long long)rl.rlim_cur,
            2 * ARMY + 300);
    exit(77);
  }
  char dir[] = "/tmp/erg-httparmy-XXXXXX", path[128], why[256];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/index.html", dir);
  assert_int_equal(erg_write_file_atomic(path, "<p>erg</p>\n", 11), 0);
  struct erg_web_server *w;
  assert_int_equal(erg_web_server_start(&w, "127.0.0.1:0", dir, dyn_metrics, NULL, why, sizeof why),
                   0);
  unsigned port = erg_web_server_port(w);
  int slow[ARMY];
  for (int i = 0; i < ARMY; i++)
    slow[i] = army_dial(i, port);
  /* 9 s of the army dribbling and reconnecting; every 0.3 s a page and
   * /metrics from 127.0.0.1, and from 127.0.0.10, one of the army's. */
  double t0 = now_s();
  int asked = 0, answered = 0, reconnects = 0;
  while (now_s() - t0 < 9) {
    for (int i = 0; i < ARMY; i++) {
      if (slow[i] >= 0 && still_open(slow[i])) {
        (void)!send(slow[i], "X", 1, MSG_NOSIGNAL);
        continue;
      }
      if (slow[i] >= 0)
        close(slow[i]);
      slow[i] = army_dial(i, port);
      reconnects++;
    }
    const char *src = asked % 4 < 2 ? "127.0.0.1" : "127.0.0.10";
    const char *target = asked % 2 ? "/metrics" : "/index.html";
    double t = now_s();
    int status = get_from(src, port, target);
    asked++;
    if (status == 200 && now_s() - t < 3)
      answered++;
    else
      fprintf(stderr, "no answer to %s from %s after %.1f s (status %d)\n", target, src,
              now_s() - t, status);
    usleep(300 * 1000);
  }
  fprintf(stderr, "army: %d of %d requests answered, %d reconnects\n", answered, asked, reconnects);
  assert_true(asked >= 10);
  assert_int_equal(answered, asked);
  assert_true(reconnects > 0); /* the army was cut and came back */
  for (int i = 0; i < ARMY; i++)
    if (slow[i] >= 0)
      close(slow[i]);
  char *body;
  assert_int_equal(get(port, "/metrics", 3, &body), 200);
  assert_true(metric(body, "erg_http_refused_total{reason=\"evicted\"} ") > 0);
  free(body);
  erg_web_server_stop(w);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  assert_int_equal(system(path), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_slow_clients),
                                     cmocka_unit_test(test_slow_army)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
