/* Static files and /metrics over libmicrohttpd. Paths are checked against a
 * strict charset and opened with O_NOFOLLOW, so nothing outside www_dir is
 * ever served. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg_common.h"
#include "erg_web.h"

struct erg_web_server {
  struct MHD_Daemon *d;
  char www[512];
  erg_web_dynamic_fn dyn;
  void *user;
};

static const char *http_content_type(const char *path) {
  static const struct { const char *ext, *type; } types[] = {
      {".html", "text/html; charset=utf-8"}, {".png", "image/png"},
      {".svg", "image/svg+xml"},             {".css", "text/css"},
      {".json", "application/json"},         {".csv", "text/csv"}};
  const char *dot = strrchr(path, '.');
  for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
    if (!strcmp(dot, types[i].ext))
      return types[i].type;
  return "application/octet-stream";
}

/* Only [A-Za-z0-9._-/], no "..", no empty components, no leading dot. */
static int http_path_ok(const char *url) {
  if (url[0] != '/' || strstr(url, "..") || strstr(url, "//") || strstr(url, "/."))
    return 0;
  for (const char *p = url; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/", *p))
      return 0;
  return strlen(url) < 256;
}

static enum MHD_Result http_reply(struct MHD_Connection *conn, int status, const char *text) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(r, "Content-Type", "text/plain");
  enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result http_file(struct erg_web_server *w, struct MHD_Connection *conn,
                                 const char *url) {
  if (!http_path_ok(url))
    return http_reply(conn, 404, "not found\n");
  char path[1024];
  const char *rel = strcmp(url, "/") ? url : "/index.html";
  snprintf(path, sizeof path, "%s%s", w->www, rel);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0)
      close(fd);
    return http_reply(conn, 404, "not found\n");
  }
  struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
  MHD_add_response_header(r, "Content-Type", http_content_type(path));
  MHD_add_response_header(r, "Cache-Control", "no-cache");
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
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
  if (strcmp(method, "GET") && strcmp(method, "HEAD"))
    return http_reply(conn, 405, "method not allowed\n");
  if (w->dyn && !strcmp(url, "/metrics")) {
    char *body = NULL;
    size_t len = 0;
    const char *ctype = "text/plain";
    int status = w->dyn(w->user, url, &body, &len, &ctype);
    if (!body)
      return http_reply(conn, 500, "internal error\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", ctype);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
  }
  return http_file(w, conn, url);
}

int erg_web_server_start(struct erg_web_server **out, const char *addr, const char *www_dir,
                         erg_web_dynamic_fn dyn, void *user, char *why, size_t whylen) {
  char host[64];
  const char *colon = strrchr(addr, ':');
  if (!colon || (size_t)(colon - addr) >= sizeof host) {
    snprintf(why, whylen, "'%s' is not HOST:PORT", addr);
    return -1;
  }
  memcpy(host, addr, (size_t)(colon - addr));
  host[colon - addr] = '\0';
  int port = atoi(colon + 1);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (!strcmp(host, "localhost"))
    strcpy(host, "127.0.0.1");
  if (port <= 0 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    snprintf(why, whylen, "'%s' is not an IPv4 HOST:PORT", addr);
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
  w->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port,
                          NULL, NULL, http_handler, w, MHD_OPTION_SOCK_ADDR, &sa,
                          MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
  if (!w->d) {
    snprintf(why, whylen, "cannot listen on %s (port in use?)", addr);
    free(w);
    return -1;
  }
  *out = w;
  return 0;
}

void erg_web_server_stop(struct erg_web_server *w) {
  if (!w)
    return;
  MHD_stop_daemon(w->d);
  free(w);
}
