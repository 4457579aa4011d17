/* Static files and /metrics over libmicrohttpd. A URL is served only when,
 * after %-decoding, it is made of a strict charset with no component
 * starting with '.' (so no ".."; sanitized names may hold ".." inside), names a
 * file with a known type, and every component opens with O_NOFOLLOW below
 * www_dir: nothing outside www_dir, no symlink, no directory listing. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_web.h"

#define HTTP_PATH_MAX 256

struct erg_web_server {
  struct MHD_Daemon *d;
  char www[1024];
  erg_web_dynamic_fn dyn;
  void *user;
  uint16_t port;
};

static const char *http_content_type(const char *path) {
  static const struct { const char *ext, *type; } types[] = {
      {".html", "text/html; charset=utf-8"}, {".png", "image/png"},
      {".svg", "image/svg+xml"},             {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},         {".csv", "text/csv; charset=utf-8"}};
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
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
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

static enum MHD_Result http_dynamic(struct erg_web_server *w, struct MHD_Connection *conn,
                                    const char *url) {
  char *body = NULL;
  size_t len = 0;
  const char *ctype = "text/plain; charset=utf-8";
  int status = w->dyn(w->user, url, &body, &len, &ctype);
  if (!body)
    return http_reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", ctype ? ctype : "text/plain");
  enum MHD_Result ret = MHD_queue_response(conn, status >= 100 && status < 600 ? (unsigned)status
                                                                                : 500u, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result http_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_size, void **ptr) {
  (void)version;
  (void)upload_data;
  (void)upload_size;
  (void)ptr;
  struct erg_web_server *w = cls;
  /* HEAD is GET without the body; MHD drops the body itself. */
  if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
    return http_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
  if (w->dyn && !strcmp(url, "/metrics"))
    return http_dynamic(w, conn, url);
  return http_file(w, conn, url);
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
  struct sockaddr_in sa;
  if (http_parse_addr(addr, &sa, why, whylen) != 0)
    return -1;
  if (strlen(www_dir) >= sizeof ((struct erg_web_server *)0)->www) {
    snprintf(why, whylen, "www directory path too long");
    return -1;
  }
  struct erg_web_server *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  erg_strlcpy(w->www, www_dir, sizeof w->www);
  w->dyn = dyn;
  w->user = user;
  w->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, ntohs(sa.sin_port),
                          NULL, NULL, http_handler, w, MHD_OPTION_SOCK_ADDR, &sa,
                          MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 256u,
                          MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
                          MHD_OPTION_UNESCAPE_CALLBACK, http_unescape, NULL, MHD_OPTION_END);
  if (!w->d) {
    snprintf(why, whylen, "cannot listen on %s (port in use?)", addr);
    free(w);
    return -1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
  w->port = info ? info->port : ntohs(sa.sin_port);
  *out = w;
  return 0;
}

unsigned erg_web_server_port(const struct erg_web_server *w) { return w->port; }

void erg_web_server_stop(struct erg_web_server *w) {
  if (!w)
    return;
  MHD_stop_daemon(w->d);
  free(w);
}
