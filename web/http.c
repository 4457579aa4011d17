// SPDX-License-Identifier: GPL-3.0-or-later
/* Static files and /metrics over libmicrohttpd. A URL is served only when,
 * after %-decoding, it is made of a strict charset with no component
 * starting with '.' (so no ".."; sanitized names may hold ".." inside), names a
 * file with a known type, and every component opens with O_NOFOLLOW below
 * www_dir: nothing outside www_dir, no symlink, no directory listing.
 *
 * Slow or hostile clients cannot take the server from others: at most
 * max_connections_per_address connections per client address and
 * max_connections in all (struct erg_web_server_limits, ergd's config), a
 * request's headers must be in within header_timeout_seconds (MHD's own
 * timeout is an idle one: a client sending a header byte every second never
 * hits it) and the whole request within request_timeout_seconds, and a
 * long URL or query is refused. At a limit, a new connection takes the
 * place of the oldest one there (of that address, or of all) still
 * sending its headers, which is cut: many slow clients from many
 * addresses only cut each other, and a complete request is served, never
 * cut for a newcomer. Only when every connection there has a complete
 * request is the newcomer refused. What is refused or cut is logged once
 * per reason and counted in erg_http_refused_total, added to /metrics
 * here (docs/web.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_web.h"

#define HTTP_PATH_MAX 256
#define HTTP_URL_MAX 2048 /* bytes of URL, query included */
#define HTTP_ARGS_MAX 64  /* query arguments (erg takes none) */

enum {
  HTTP_PER_IP,
  HTTP_LIMIT,
  HTTP_HEADER_TIMEOUT,
  HTTP_REQUEST_TIMEOUT,
  HTTP_URI,
  HTTP_EVICTED,
  HTTP_NREASONS
};
static const char *const http_reasons[HTTP_NREASONS] = {"per_ip_limit",   "connection_limit",
                                                        "header_timeout", "request_timeout",
                                                        "uri_too_long",   "evicted"};

void erg_web_server_limits_default(struct erg_web_server_limits *l) {
  l->max_connections = 256;
  l->max_connections_per_address = 32;
  l->header_timeout_seconds = 5;
  l->request_timeout_seconds = 120;
}

int erg_web_server_limits_check(const struct erg_web_server_limits *l, char *why, size_t whylen) {
  if (l->max_connections < 1 || l->max_connections > 100000)
    snprintf(why, whylen, "http_max_connections %u is not within 1-100000", l->max_connections);
  else if (l->max_connections_per_address < 1 ||
           l->max_connections_per_address > l->max_connections)
    snprintf(why, whylen,
             "http_max_connections_per_address %u is not within 1-http_max_connections (%u)",
             l->max_connections_per_address, l->max_connections);
  else if (!(l->header_timeout_seconds >= 1 && l->header_timeout_seconds <= 3600))
    snprintf(why, whylen, "http_header_timeout_seconds %g is not within 1-3600",
             l->header_timeout_seconds);
  else if (!(l->request_timeout_seconds >= l->header_timeout_seconds &&
             l->request_timeout_seconds <= 86400))
    snprintf(why, whylen,
             "http_request_timeout_seconds %g is not within http_header_timeout_seconds (%g)-86400",
             l->request_timeout_seconds, l->header_timeout_seconds);
  else
    return 0;
  return -1;
}

/* One open connection, for the limits and the deadline sweeper. */
struct http_conn {
  struct http_conn *next, *prev;
  int fd;
  uint32_t ip;       /* IPv4, network order */
  uint64_t since_ns; /* monotonic: accept, or the end of the previous answer */
  int in_headers;    /* the handler has not seen the request yet */
  int cut;           /* shut down by the sweeper */
};

struct erg_web_server {
  struct MHD_Daemon *d;
  char www[1024];
  erg_web_dynamic_fn dyn;
  void *user;
  uint16_t port;
  struct erg_web_server_limits lim;
  pthread_mutex_t lock; /* conns, nconns, refused, logged; MHD's thread and the sweeper */
  pthread_cond_t wake;
  pthread_t sweeper;
  int sweeper_started, stopping;
  struct http_conn *conns;
  size_t nconns, ncut; /* ncut: shut down, not yet closed by MHD */
  uint64_t refused[HTTP_NREASONS];
  unsigned logged; /* bit per reason */
};

/* Set by the URI callback as the request's context: answer 414. */
static char http_uri_refused;

/* Counts a refusal (lock held); returns 1 the first time for the reason,
 * when the caller logs it once. */
static int http_refuse(struct erg_web_server *w, int reason) {
  w->refused[reason]++;
  if (w->logged & (1u << reason))
    return 0;
  w->logged |= 1u << reason;
  return 1;
}

static void http_ip_text(uint32_t ip, char out[INET_ADDRSTRLEN]) {
  struct in_addr a = {.s_addr = ip};
  if (!inet_ntop(AF_INET, &a, out, INET_ADDRSTRLEN))
    strcpy(out, "?");
}

static const char *http_content_type(const char *path) {
  static const struct {
    const char *ext, *type;
  } types[] = {{".html", "text/html; charset=utf-8"},
               {".png", "image/png"},
               {".svg", "image/svg+xml"},
               {".css", "text/css; charset=utf-8"},
               {".json", "application/json"},
               {".csv", "text/csv; charset=utf-8"}};
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash : path, '.');
  for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
    if (!strcmp(dot, types[i].ext))
      return types[i].type;
  return NULL;
}

/* Only [A-Za-z0-9._-/], no empty or hidden components: "/." also rules
 * out every ".." component, while "a..b" inside a name (the sanitizer
 * keeps dots, e.g. "_.._etc_passwd-<hash>") is a plain file name. */
static int http_path_ok(const char *url) {
  size_t len = strlen(url);
  if (url[0] != '/' || len >= HTTP_PATH_MAX || strstr(url, "//") || strstr(url, "/."))
    return 0;
  return strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") == len;
}

/* MHD decodes %HH before the handler sees the URL; a decoded NUL would cut
 * the string short ("/index.html%00.png"), so it becomes a byte the
 * charset check refuses. */
static int http_hex(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

static size_t http_unescape(void *cls, struct MHD_Connection *c, char *s) {
  (void)cls;
  (void)c;
  char *o = s;
  for (const char *p = s; *p; p++) {
    int hi = p[0] == '%' ? http_hex(p[1]) : -1, lo = hi >= 0 ? http_hex(p[2]) : -1;
    if (lo >= 0) {
      *o++ = hi || lo ? (char)(hi * 16 + lo) : '\x01';
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  return (size_t)(o - s);
}

static enum MHD_Result http_reply(struct MHD_Connection *conn, unsigned status, const char *text) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
  if (!r)
    return MHD_NO;
  MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
  enum MHD_Result ret = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return ret;
}

/* Opens rel (checked, no leading '/') below www one component at a time,
 * never following a symlink; returns a regular file's fd or -1. */
static int http_open_below(const char *www, const char *rel) {
  char buf[HTTP_PATH_MAX];
  erg_strlcpy(buf, rel, sizeof buf);
  int dir = open(www, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char *save = NULL;
  for (char *c = strtok_r(buf, "/", &save); c && dir >= 0; c = strtok_r(NULL, "/", &save)) {
    int last = save == NULL || *save == '\0';
    int fd = openat(dir, c, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY));
    close(dir);
    if (last) {
      struct stat st;
      if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
      }
      return fd;
    }
    dir = fd;
  }
  if (dir >= 0)
    close(dir);
  return -1;
}

static enum MHD_Result http_file(struct erg_web_server *w, struct MHD_Connection *conn,
                                 const char *url) {
  const char *rel = strcmp(url, "/") ? url : "/index.html";
  const char *ctype = http_content_type(rel);
  if (!http_path_ok(rel) || !ctype)
    return http_reply(conn, MHD_HTTP_NOT_FOUND, "not found\n");
  int fd = http_open_below(w->www, rel + 1);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0)
      close(fd);
    return http_reply(conn, MHD_HTTP_NOT_FOUND, "not found\n");
  }
  /* O_NONBLOCK only mattered for opening (a FIFO would block). */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
  if (!r) {
    close(fd);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", ctype);
  MHD_add_response_header(r, "Cache-Control", "no-cache");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

/* erg_http_refused_total and the open connections, after the body of
 * /metrics (the server's own families: the collector does not see them). */
static char *http_metrics_append(struct erg_web_server *w, char *body, size_t *len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f)
    return body;
  pthread_mutex_lock(&w->lock);
  fputs("# HELP erg_http_refused_total Connections and requests the HTTP server refused "
        "(over the per-address or total connection limit, URL or query too long) or cut "
        "(headers or the whole request too slow).\n"
        "# TYPE erg_http_refused_total counter\n",
        f);
  for (int r = 0; r < HTTP_NREASONS; r++)
    fprintf(f, "erg_http_refused_total{reason=\"%s\"} %llu\n", http_reasons[r],
            (unsigned long long)w->refused[r]);
  fprintf(f,
          "# HELP erg_http_connections Open HTTP connections.\n"
          "# TYPE erg_http_connections gauge\nerg_http_connections %zu\n",
          w->nconns);
  pthread_mutex_unlock(&w->lock);
  if (fclose(f) != 0) {
    free(buf);
    return body;
  }
  char *grown = realloc(body, *len + n + 1);
  if (grown) {
    memcpy(grown + *len, buf, n + 1);
    *len += n;
    body = grown;
  }
  free(buf);
  return body;
}

static enum MHD_Result http_dynamic(struct erg_web_server *w, struct MHD_Connection *conn,
                                    const char *url) {
  char *body = NULL;
  size_t len = 0;
  const char *ctype = "text/plain; charset=utf-8";
  int status = w->dyn(w->user, url, &body, &len, &ctype);
  if (!body)
    return http_reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
  if (status == 200)
    body = http_metrics_append(w, body, &len);
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", ctype ? ctype : "text/plain");
  enum MHD_Result ret =
      MHD_queue_response(conn, status >= 100 && status < 600 ? (unsigned)status : 500u, r);
  MHD_destroy_response(r);
  return ret;
}

static struct http_conn *http_conn_of(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

static enum MHD_Result http_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_size, void **ptr) {
  (void)version;
  (void)upload_data;
  (void)upload_size;
  struct erg_web_server *w = cls;
  /* The headers are in: from now on only the request deadline applies. */
  struct http_conn *hc = http_conn_of(conn);
  pthread_mutex_lock(&w->lock);
  if (hc)
    hc->in_headers = 0;
  int log = *ptr == &http_uri_refused && http_refuse(w, HTTP_URI);
  pthread_mutex_unlock(&w->lock);
  if (*ptr == &http_uri_refused) {
    char ip[INET_ADDRSTRLEN];
    http_ip_text(hc ? hc->ip : 0, ip);
    if (log)
      erg_warn("http: refused a request from %s with a URL over %d bytes or %d query "
               "arguments (414; logged once, counted in erg_http_refused_total)",
               ip, HTTP_URL_MAX, HTTP_ARGS_MAX);
    return http_reply(conn, MHD_HTTP_URI_TOO_LONG, "URI too long\n");
  }
  /* HEAD is GET without the body; MHD drops the body itself. */
  if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
    return http_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
  if (w->dyn && !strcmp(url, "/metrics"))
    return http_dynamic(w, conn, url);
  return http_file(w, conn, url);
}

/* Called with the request line, before MHD splits the query into one
 * record per argument in the connection's memory pool: a query of a few
 * thousand '&' exhausts the pool, and then not even MHD's error answer fits
 * and the client waits for the timeout. erg takes no query arguments: the
 * query is ended right after its '?' (uri lies in MHD's writable request
 * buffer, where MHD found the '?' before this call and parses from it
 * after), and a URL or query over the bounds gets 414. */
static void *http_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
  (void)cls;
  (void)conn;
  size_t len = strlen(uri), args = 0;
  char *q = strchr(uri, '?');
  if (q) {
    args = 1;
    for (const char *p = q + 1; *p; p++)
      args += *p == '&' || *p == ';';
    q[1] = '\0';
  }
  return len > HTTP_URL_MAX || args > HTTP_ARGS_MAX ? &http_uri_refused : NULL;
}

/* Shuts hc down (lock held): MHD sees the end of the stream and closes
 * it as usual; until then it no longer counts against the limits. */
static void http_cut(struct erg_web_server *w, struct http_conn *hc) {
  shutdown(hc->fd, SHUT_RDWR);
  hc->cut = 1;
  w->ncut++;
}

/* The oldest connection still sending its headers, of address ip or (all)
 * of any; NULL when every one has a complete request. */
static struct http_conn *http_oldest_in_headers(struct erg_web_server *w, uint32_t ip, int all) {
  struct http_conn *old = NULL;
  for (struct http_conn *hc = w->conns; hc; hc = hc->next)
    if (!hc->cut && hc->fd >= 0 && hc->in_headers && (all || hc->ip == ip) &&
        (!old || hc->since_ns < old->since_ns))
      old = hc;
  return old;
}

/* Per-address and total limits, checked before MHD sets the connection
 * up (the connections it tracks in http_notify, on the same thread). At a
 * limit the newcomer takes the place of the oldest connection there still
 * in its headers (see the top of the file). */
static enum MHD_Result http_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
  struct erg_web_server *w = cls;
  uint32_t ip = addr->sa_family == AF_INET && addrlen >= sizeof(struct sockaddr_in)
                    ? ((const struct sockaddr_in *)addr)->sin_addr.s_addr
                    : 0;
  pthread_mutex_lock(&w->lock);
  size_t same = 0;
  for (const struct http_conn *hc = w->conns; hc; hc = hc->next)
    same += hc->ip == ip && !hc->cut;
  int reason = -1, evicted = 0;
  uint32_t evicted_ip = 0;
  for (int all = 0; all < 2 && reason < 0; all++) {
    size_t open = all ? w->nconns - w->ncut : same;
    size_t max = all ? w->lim.max_connections : w->lim.max_connections_per_address;
    if (open < max)
      continue;
    struct http_conn *old = http_oldest_in_headers(w, ip, all);
    if (!old) {
      reason = all ? HTTP_LIMIT : HTTP_PER_IP;
      break;
    }
    evicted_ip = old->ip;
    http_cut(w, old);
    same -= old->ip == ip;
    evicted = http_refuse(w, HTTP_EVICTED) ? 1 : evicted;
  }
  int log = reason >= 0 && http_refuse(w, reason);
  pthread_mutex_unlock(&w->lock);
  char text[INET_ADDRSTRLEN];
  if (evicted) {
    http_ip_text(evicted_ip, text);
    erg_warn("http: closed a connection from %s still sending its request headers to make "
             "room for a new one (connection limits reached; logged once, counted in "
             "erg_http_refused_total)",
             text);
  }
  if (log) {
    http_ip_text(ip, text);
    erg_warn("http: refused a connection from %s: %s %u connections open already, each with "
             "a request being answered (logged once, counted in erg_http_refused_total)",
             text, reason == HTTP_LIMIT ? "the server has" : "that address has",
             reason == HTTP_LIMIT ? w->lim.max_connections : w->lim.max_connections_per_address);
  }
  return reason >= 0 ? MHD_NO : MHD_YES;
}

static void http_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode code) {
  struct erg_web_server *w = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    struct http_conn *hc = calloc(1, sizeof *hc);
    if (!hc)
      return;
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    hc->fd = fd ? fd->connect_fd : -1;
    if (ad && ad->client_addr && ad->client_addr->sa_family == AF_INET)
      hc->ip = ((const struct sockaddr_in *)ad->client_addr)->sin_addr.s_addr;
    hc->since_ns = erg_time_monotonic_ns();
    hc->in_headers = 1;
    pthread_mutex_lock(&w->lock);
    hc->next = w->conns;
    if (w->conns)
      w->conns->prev = hc;
    w->conns = hc;
    w->nconns++;
    pthread_mutex_unlock(&w->lock);
    *socket_context = hc;
    return;
  }
  /* MHD_CONNECTION_NOTIFY_CLOSED comes before MHD closes the socket: under
   * the lock the sweeper never shuts down a descriptor already reused. */
  struct http_conn *hc = *socket_context;
  if (!hc)
    return;
  pthread_mutex_lock(&w->lock);
  if (hc->prev)
    hc->prev->next = hc->next;
  else
    w->conns = hc->next;
  if (hc->next)
    hc->next->prev = hc->prev;
  w->nconns--;
  w->ncut -= hc->cut;
  pthread_mutex_unlock(&w->lock);
  free(hc);
  *socket_context = NULL;
}

/* The answer went out: a kept-alive connection starts its next request. */
static void http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe) {
  (void)con_cls;
  (void)toe;
  struct erg_web_server *w = cls;
  struct http_conn *hc = http_conn_of(conn);
  if (!hc)
    return;
  pthread_mutex_lock(&w->lock);
  hc->in_headers = 1;
  hc->since_ns = erg_time_monotonic_ns();
  pthread_mutex_unlock(&w->lock);
}

/* Once a second: connections past a deadline are shut down; MHD then sees
 * the end of the stream and closes them as usual. */
static void *http_sweep(void *arg) {
  struct erg_web_server *w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->stopping) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 1;
    pthread_cond_timedwait(&w->wake, &w->lock, &until);
    uint64_t now = erg_time_monotonic_ns();
    int log[2] = {0, 0};
    uint32_t ip[2] = {0, 0};
    for (struct http_conn *hc = w->conns; hc && !w->stopping; hc = hc->next) {
      double limit_s =
          hc->in_headers ? w->lim.header_timeout_seconds : w->lim.request_timeout_seconds;
      if (hc->cut || hc->fd < 0 || now - hc->since_ns <= (uint64_t)(limit_s * 1e9))
        continue;
      http_cut(w, hc);
      int k = hc->in_headers ? 0 : 1;
      if (http_refuse(w, k ? HTTP_REQUEST_TIMEOUT : HTTP_HEADER_TIMEOUT))
        log[k] = 1, ip[k] = hc->ip;
    }
    pthread_mutex_unlock(&w->lock);
    for (int k = 0; k < 2; k++) {
      char text[INET_ADDRSTRLEN];
      http_ip_text(ip[k], text);
      if (log[k])
        erg_warn("http: closed a connection from %s whose %s not in within %g s (slow or "
                 "stalled client; logged once, counted in erg_http_refused_total)",
                 text, k ? "request was" : "request headers were",
                 k ? w->lim.request_timeout_seconds : w->lim.header_timeout_seconds);
    }
    pthread_mutex_lock(&w->lock);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

static void http_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  msg[strcspn(msg, "\n")] = '\0';
  erg_debug("http: %s", msg);
}

/* "host:port", host an IPv4 literal or "localhost"; port 0 picks a free one. */
static int http_parse_addr(const char *addr, struct sockaddr_in *sa, char *why, size_t whylen) {
  char host[64];
  const char *colon = strrchr(addr, ':');
  char *end = NULL;
  if (!colon || (size_t)(colon - addr) >= sizeof host) {
    snprintf(why, whylen, "'%s' is not HOST:PORT", addr);
    return -1;
  }
  memcpy(host, addr, (size_t)(colon - addr));
  host[colon - addr] = '\0';
  errno = 0;
  long port = strtol(colon + 1, &end, 10);
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  if (!strcmp(host, "localhost"))
    strcpy(host, "127.0.0.1");
  if (errno || end == colon + 1 || *end || port < 0 || port > 65535 ||
      inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
    snprintf(why, whylen, "'%s' is not an IPv4 HOST:PORT", addr);
    return -1;
  }
  sa->sin_port = htons((uint16_t)port);
  return 0;
}

int erg_web_server_start(struct erg_web_server **out, const char *addr, const char *www_dir,
                         erg_web_dynamic_fn dyn, void *user, char *why, size_t whylen) {
  return erg_web_server_start_limits(out, addr, www_dir, dyn, user, NULL, why, whylen);
}

int erg_web_server_start_limits(struct erg_web_server **out, const char *addr, const char *www_dir,
                                erg_web_dynamic_fn dyn, void *user,
                                const struct erg_web_server_limits *lim, char *why, size_t whylen) {
  struct sockaddr_in sa;
  struct erg_web_server_limits def;
  erg_web_server_limits_default(&def);
  if (!lim)
    lim = &def;
  if (http_parse_addr(addr, &sa, why, whylen) != 0 ||
      erg_web_server_limits_check(lim, why, whylen) != 0)
    return -1;
  if (strlen(www_dir) >= sizeof((struct erg_web_server *)0)->www) {
    snprintf(why, whylen, "www directory path too long");
    return -1;
  }
  struct erg_web_server *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  erg_strlcpy(w->www, www_dir, sizeof w->www);
  w->lim = *lim;
  w->dyn = dyn;
  w->user = user;
  pthread_mutex_init(&w->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w->wake, &ca);
  pthread_condattr_destroy(&ca);
  /* One internal thread (epoll): the accept policy and the notifications
   * run there in order, which http_accept's count relies on. MHD's own
   * limits are a backstop above erg's: connections cut to make room count
   * for MHD until it has closed them. MHD's idle timeout (whole seconds)
   * is the header timeout: a connection silent that long is closed. */
  unsigned idle_s = (unsigned)ceil(lim->header_timeout_seconds);
  w->d = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, ntohs(sa.sin_port), http_accept, w,
      http_handler, w, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_TIMEOUT, idle_s,
      MHD_OPTION_CONNECTION_LIMIT, 2 * lim->max_connections + 16,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, 2 * lim->max_connections_per_address + 2,
      MHD_OPTION_NOTIFY_CONNECTION, http_notify, w, MHD_OPTION_NOTIFY_COMPLETED, http_completed, w,
      MHD_OPTION_URI_LOG_CALLBACK, http_uri, w, MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
      MHD_OPTION_UNESCAPE_CALLBACK, http_unescape, NULL, MHD_OPTION_END);
  if (!w->d) {
    snprintf(why, whylen, "cannot listen on %s (port in use?)", addr);
    erg_web_server_stop(w);
    return -1;
  }
  if (pthread_create(&w->sweeper, NULL, http_sweep, w) != 0) {
    snprintf(why, whylen, "cannot start the HTTP deadline thread");
    erg_web_server_stop(w);
    return -1;
  }
  w->sweeper_started = 1;
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
  w->port = info ? info->port : ntohs(sa.sin_port);
  *out = w;
  return 0;
}

unsigned erg_web_server_port(const struct erg_web_server *w) { return w->port; }

void erg_web_server_stop(struct erg_web_server *w) {
  if (!w)
    return;
  if (w->sweeper_started) {
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->sweeper, NULL);
  }
  /* Closes every connection: http_notify frees their records. */
  if (w->d)
    MHD_stop_daemon(w->d);
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  free(w);
}
