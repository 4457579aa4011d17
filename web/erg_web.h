/* erg web: static pages and graphs rendered from the store, and the HTTP
 * server (libmicrohttpd) that serves them next to /metrics. */
#ifndef ERG_WEB_H
#define ERG_WEB_H

#include <stddef.h>
#include <stdint.h>

struct erg_store;

/* Renders <www_dir>/index.html and, per node, node-<name>.html with PNG
 * graphs (hour, day, week) of measured/idle/dynamic power and the stacked
 * per-command breakdown. Writes every file atomically (temp + rename) so a
 * reader never sees half a page. nodes: original node names. */
int erg_web_render(const struct erg_store *store, const char *www_dir, const char *const *nodes,
                   size_t nnodes, int64_t now, char *why, size_t whylen);

/* Extra dynamic content (e.g. /metrics): fills a malloc'd body and content
 * type; returns HTTP status. */
typedef int (*erg_web_dynamic_fn)(void *user, const char *url, char **body, size_t *len,
                                  const char **content_type);

struct erg_web_server;
/* addr "127.0.0.1:9710". Serves files under www_dir (no traversal, only
 * regular files), and url "/metrics" through dyn when set. */
int erg_web_server_start(struct erg_web_server **out, const char *addr, const char *www_dir,
                         erg_web_dynamic_fn dyn, void *user, char *why, size_t whylen);
void erg_web_server_stop(struct erg_web_server *w);
/* The port actually bound: the one asked for, or the free port the system
 * picked when addr said port 0. */
unsigned erg_web_server_port(const struct erg_web_server *w);

#endif
