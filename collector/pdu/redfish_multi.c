// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's Redfish meters, all over one curl multi handle (erg_redfish.h):
 * one thread drives every meter's requests at once, so a thousand BMCs
 * that each answer in a second take a second, not a thousand. Each meter
 * is a small state machine over its own easy handle (one request at a
 * time, its connection kept alive in the multi handle's cache): log in,
 * discover, then one GET per plan resource a poll. What a request's answer
 * means (redirects on the BMC, 401 -> log in again once, 429/503 -> back
 * off) is decided by the code the blocking driver uses (redfish.c).
 *
 * Discovery (erg_rf_discover) asks for documents through a synchronous
 * callback; here it runs over a cache: a document not fetched yet is
 * noted and the walk's result thrown away; once the noted ones are
 * fetched the walk runs again from the cache, until it asks for nothing
 * new. Each document is fetched once; the walk is CPU only.
 *
 * Each meter's connection lives in a connection cache of its own (a curl
 * share with CURL_LOCK_DATA_CONNECT), not in the multi handle's: libcurl
 * 7.88 walks the whole cache of a handle at every curl_multi_remove_handle
 * (looking for a connect-only connection) and once a second for dead
 * connections, so one cache of 5,000 connections made each request cost
 * O(BMCs), a round O(BMCs^2). */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "erg_common.h"
#include "redfish_int.h"

enum { ST_IDLE, ST_LOGIN, ST_GET, ST_WAIT, ST_LOGOUT };
#define RF_OP_CLOSE 3

struct rf_doc {
  char *uri;
  json_t *doc; /* NULL: the GET failed, why says how */
  char *why;
};

struct rf_slot {
  struct erg_pdu_source *src;
  struct rf_priv *p;
  CURLSH *sh; /* this meter's connection cache; outlives its handles */
  int op, st;
  bool in_multi;
  char uri[ERG_RF_URI_MAX + 160];  /* what was asked for */
  char path[ERG_RF_URI_MAX + 160]; /* what is fetched (after redirects) */
  int attempt, hops;
  uint64_t wait_until_ns, t0_ns;
  struct rf_buf b;
  /* open: the discovery's documents, and those it asked for and lacks */
  struct rf_doc *docs;
  int ndocs, capdocs;
  char **pending;
  int npending, cappending;
  bool failing; /* the open failed: logging out, then fail_why */
  bool like;    /* opened as another connection: the plan is there, no discovery */
  char fail_why[1024];
  /* poll */
  int term;
  struct rf_accum acc;
};

struct erg_rf_multi {
  CURLM *cm;
  int epfd;            /* the sockets curl wants watched */
  uint64_t timeout_ns; /* curl's timer (monotonic), 0: none */
  int n;
  struct rf_slot *s;
  erg_rf_done_fn done;
  void *arg;
  int nwait; /* slots in ST_WAIT */
};

static int multi_socket_cb(CURL *e, curl_socket_t fd, int what, void *arg, void *known);
static int multi_timer_cb(CURLM *cm, long timeout_ms, void *arg);

struct erg_rf_multi *erg_rf_multi_new(struct erg_pdu_source **srcs, int n, erg_rf_done_fn done,
                                      void *arg, char *why, size_t whylen) {
  curl_global_init(CURL_GLOBAL_DEFAULT); /* counted by curl; once is what counts */
  struct erg_rf_multi *m = calloc(1, sizeof *m);
  if (m)
    m->s = calloc((size_t)(n > 0 ? n : 1), sizeof *m->s);
  if (m && m->s)
    m->cm = curl_multi_init();
  if (!m || !m->s || !m->cm) {
    snprintf(why, whylen, "out of memory");
    if (m)
      free(m->s);
    free(m);
    return NULL;
  }
  m->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (m->epfd < 0) {
    snprintf(why, whylen, "epoll: %s", strerror(errno));
    curl_multi_cleanup(m->cm);
    free(m->s);
    free(m);
    return NULL;
  }
  curl_multi_setopt(m->cm, CURLMOPT_SOCKETFUNCTION, multi_socket_cb);
  curl_multi_setopt(m->cm, CURLMOPT_SOCKETDATA, m);
  curl_multi_setopt(m->cm, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
  curl_multi_setopt(m->cm, CURLMOPT_TIMERDATA, m);
  m->n = n;
  m->done = done;
  m->arg = arg;
  for (int i = 0; i < n; i++)
    m->s[i].src = srcs[i];
  /* Keep one connection per BMC alive between polls (and a few spare). */
  curl_multi_setopt(m->cm, CURLMOPT_MAXCONNECTS, (long)n + 16);
  return m;
}

static void slot_docs_free(struct rf_slot *s) {
  for (int i = 0; i < s->ndocs; i++) {
    free(s->docs[i].uri);
    free(s->docs[i].why);
    json_decref(s->docs[i].doc);
  }
  free(s->docs);
  s->docs = NULL;
  s->ndocs = s->capdocs = 0;
  for (int i = 0; i < s->npending; i++)
    free(s->pending[i]);
  free(s->pending);
  s->pending = NULL;
  s->npending = s->cappending = 0;
}

static void slot_report(struct erg_rf_multi *m, struct rf_slot *s, int rc, const char *why) {
  int op = s->op;
  s->op = 0;
  s->st = ST_IDLE;
  if (op == ERG_RF_OP_OPEN) {
    slot_docs_free(s);
    s->p->discovering = false;
    if (rc == 0) {
      s->src->priv = s->p;
      if (s->src->cfg.nchannels == 0) {
        s->src->cfg.nchannels = 1;
        s->src->cfg.channels[0] = 1;
      }
    } else {
      s->p->token[0] = '\0'; /* logged out already, or never in */
      rf_free(s->p);
      s->p = NULL;
      s->src->driver = NULL;
    }
  }
  if (op == ERG_RF_OP_OPEN || op == ERG_RF_OP_POLL)
    m->done(m->arg, (int)(s - m->s), op, rc, op == ERG_RF_OP_POLL ? &s->acc.r : NULL,
            why ? why : "");
}

/* Sends method path on s's handle; a URL refused is the request failed. */
static void slot_send(struct erg_rf_multi *m, struct rf_slot *s, int st, const char *method,
                      const char *path, const char *body);

static void slot_get(struct erg_rf_multi *m, struct rf_slot *s, const char *uri) {
  snprintf(s->uri, sizeof s->uri, "%s", uri);
  snprintf(s->path, sizeof s->path, "%s", uri);
  s->attempt = s->hops = 0;
  slot_send(m, s, ST_GET, "GET", s->path, NULL);
}

static void slot_login(struct erg_rf_multi *m, struct rf_slot *s) {
  char *body = rf_login_body(s->p);
  if (!body) {
    slot_report(m, s, -1, "out of memory");
    return;
  }
  s->p->token[0] = '\0';
  rf_headers(s->p);
  slot_send(m, s, ST_LOGIN, "POST", RF_SESSIONS_URI, body); /* curl copies the body */
  rf_login_body_free(body);
}

/* The open failed: log out first when logged in, then say why. */
static void slot_open_fail(struct erg_rf_multi *m, struct rf_slot *s, const char *why) {
  struct rf_priv *p = s->p;
  if (p->auth == RF_AUTH_SESSION && p->token[0] && p->session_uri[0] && !s->failing) {
    s->failing = true;
    snprintf(s->fail_why, sizeof s->fail_why, "%.*s", (int)sizeof s->fail_why - 1, why);
    slot_send(m, s, ST_LOGOUT, "DELETE", p->session_uri, NULL);
    return;
  }
  slot_report(m, s, -1, why);
}

/* ---- discovery over the cache ---- */
static json_t *slot_cached(void *ctx, const char *uri, char *why, size_t whylen) {
  struct rf_slot *s = ctx;
  for (int i = 0; i < s->ndocs; i++)
    if (!strcmp(s->docs[i].uri, uri)) {
      if (!s->docs[i].doc)
        snprintf(why, whylen, "%s", s->docs[i].why);
      return s->docs[i].doc ? json_incref(s->docs[i].doc) : NULL;
    }
  for (int i = 0; i < s->npending; i++)
    if (!strcmp(s->pending[i], uri))
      goto noted;
  if (s->npending == s->cappending) {
    int cap = s->cappending ? 2 * s->cappending : 8;
    char **q = realloc(s->pending, (size_t)cap * sizeof *q);
    if (!q)
      goto noted;
    s->pending = q;
    s->cappending = cap;
  }
  if ((s->pending[s->npending] = strdup(uri)))
    s->npending++;
noted:
  snprintf(why, whylen, "%s: not fetched yet", uri);
  return NULL;
}

static void slot_keep(struct rf_slot *s, json_t *doc, const char *why) {
  if (s->ndocs == s->capdocs) {
    int cap = s->capdocs ? 2 * s->capdocs : 16;
    struct rf_doc *d = realloc(s->docs, (size_t)cap * sizeof *d);
    if (!d) {
      json_decref(doc);
      return; /* asked again, fetched again */
    }
    s->docs = d;
    s->capdocs = cap;
  }
  s->docs[s->ndocs++] =
      (struct rf_doc){.uri = strdup(s->uri), .doc = doc, .why = strdup(why ? why : "")};
  if (!s->docs[s->ndocs - 1].uri) {
    json_decref(doc);
    free(s->docs[--s->ndocs].why);
  }
}

static void slot_discover(struct erg_rf_multi *m, struct rf_slot *s) {
  if (s->like) { /* logged in, when it does: open */
    slot_report(m, s, 0, NULL);
    return;
  }
  if (s->npending) {
    char *u = s->pending[--s->npending];
    slot_get(m, s, u);
    free(u);
    return;
  }
  struct erg_rf_discovery *d = calloc(1, sizeof *d);
  char inner[1024];
  if (!d) {
    slot_open_fail(m, s, "out of memory");
    return;
  }
  int rc = erg_rf_discover(slot_cached, s, s->src->cfg.chassis, false, d, inner, sizeof inner);
  if (s->npending) {
    free(d);
    slot_discover(m, s);
    return;
  }
  if (rc) {
    char why[1200];
    snprintf(why, sizeof why, "%s: %s", s->src->cfg.host, inner);
    free(d);
    slot_open_fail(m, s, why);
    return;
  }
  s->p->plan = d->plan;
  free(d);
  slot_report(m, s, 0, NULL);
}

/* ---- polls ---- */
static void slot_read_next(struct erg_rf_multi *m, struct rf_slot *s) {
  const char *uri = rf_read_uri(s->p, s->term);
  if (uri) {
    slot_get(m, s, uri);
    return;
  }
  char why[300];
  int rc = rf_read_end(s->p, &s->acc, why, sizeof why);
  slot_report(m, s, rc, why);
}

/* A GET failed (why): a discovery notes it and walks on; a poll fails. */
static void slot_get_failed(struct erg_rf_multi *m, struct rf_slot *s, const char *why) {
  if (s->op == ERG_RF_OP_OPEN) {
    slot_keep(s, NULL, why);
    slot_discover(m, s);
  } else {
    slot_report(m, s, -1, why);
  }
}

static void slot_get_ok(struct erg_rf_multi *m, struct rf_slot *s, json_t *doc) {
  if (s->op == ERG_RF_OP_OPEN) {
    slot_keep(s, doc, NULL);
    slot_discover(m, s);
    return;
  }
  rf_read_term(s->p, &s->acc, s->term, doc);
  json_decref(doc);
  s->term++;
  slot_read_next(m, s);
}

static void slot_send(struct erg_rf_multi *m, struct rf_slot *s, int st, const char *method,
                      const char *path, const char *body) {
  char url[600], why[700];
  s->st = st;
  if (rf_url(s->p, path, url, sizeof url, why, sizeof why)) {
    if (st == ST_GET) {
      slot_get_failed(m, s, why);
    } else {
      if (st == ST_LOGOUT)
        s->p->token[0] = '\0'; /* a session elsewhere: not followed */
      slot_report(m, s, -1, s->failing ? s->fail_why : why);
    }
    return;
  }
  rf_prepare(s->p, method, url, body, &s->b);
  curl_easy_setopt(s->p->curl, CURLOPT_PRIVATE, s);
  if (curl_multi_add_handle(m->cm, s->p->curl) != CURLM_OK) {
    slot_report(m, s, -1, "curl: cannot add the request");
    return;
  }
  s->in_multi = true;
}

/* s's request ended with rc. */
static void slot_answer(struct erg_rf_multi *m, struct rf_slot *s, CURLcode rc) {
  curl_multi_remove_handle(m->cm, s->p->curl);
  s->in_multi = false;
  long status;
  char why[1024];
  const char *method = s->st == ST_LOGIN ? "POST" : s->st == ST_LOGOUT ? "DELETE" : "GET";
  const char *path = s->st == ST_LOGIN    ? RF_SESSIONS_URI
                     : s->st == ST_LOGOUT ? s->p->session_uri
                                          : s->path;
  int frc = rf_finish(s->p, rc, method, path, 0, &status, &s->b, why, sizeof why);
  if (s->st == ST_LOGOUT) {
    free(s->b.p);
    s->b.p = NULL; /* freed again by erg_rf_multi_free otherwise */
    s->p->token[0] = '\0';
    if (s->failing)
      slot_report(m, s, -1, s->fail_why);
    else
      slot_report(m, s, 0, NULL);
    return;
  }
  if (s->st == ST_LOGIN) {
    free(s->b.p);
    s->b.p = NULL;
    if (frc || rf_login_answer(s->p, status, why, sizeof why)) {
      slot_report(m, s, -1, why); /* no session to log out of */
      return;
    }
    if (s->path[0]) /* logged in again: the GET once more */
      slot_send(m, s, ST_GET, "GET", s->path, NULL);
    else
      slot_discover(m, s);
    return;
  }
  if (frc) {
    slot_get_failed(m, s, why);
    return;
  }
  double wait;
  enum rf_action a = rf_answer(s->p, status, s->path, s->attempt, s->hops, &wait, why, sizeof why);
  if (a != RF_ACT_OK) {
    free(s->b.p);
    s->b.p = NULL;
  }
  switch (a) {
    case RF_ACT_REDIRECT:
      snprintf(s->path, sizeof s->path, "%s", s->p->h_location);
      s->hops++;
      slot_send(m, s, ST_GET, "GET", s->path, NULL);
      return;
    case RF_ACT_LOGIN:
      s->attempt = 1;
      slot_login(m, s);
      return;
    case RF_ACT_RETRY:
      s->attempt = 1;
      s->st = ST_WAIT;
      s->wait_until_ns = erg_time_monotonic_ns() + (uint64_t)(wait * 1e9);
      m->nwait++;
      return;
    case RF_ACT_FAIL:
      slot_get_failed(m, s, why);
      return;
    case RF_ACT_OK:
      break;
  }
  json_t *j = s->op == ERG_RF_OP_POLL ? rf_body_reading(&s->b, s->path, why, sizeof why)
                                      : rf_body_json(&s->b, s->path, why, sizeof why);
  free(s->b.p);
  s->b.p = NULL;
  if (j)
    slot_get_ok(m, s, j);
  else
    slot_get_failed(m, s, why);
}

/* Opens slot i with cfg; like: the plan to poll, without a discovery. */
static int slot_open(struct erg_rf_multi *m, int i, const struct erg_pdu_source_config *cfg,
                     const struct erg_rf_plan *like) {
  struct rf_slot *s = &m->s[i];
  if (s->op)
    return -1;
  memset(s->src, 0, sizeof *s->src);
  s->src->cfg = *cfg;
  s->src->driver = &erg_pdu_driver_redfish;
  s->op = ERG_RF_OP_OPEN;
  s->failing = false;
  s->path[0] = '\0';
  s->t0_ns = erg_time_monotonic_ns();
  int rc;
  char why[1024];
  s->p = rf_setup(cfg, NULL, &rc, why, sizeof why);
  if (!s->p) {
    s->src->driver = NULL;
    s->op = 0;
    m->done(m->arg, i, ERG_RF_OP_OPEN, -1, NULL, why);
    return 0;
  }
  s->p->discovering = true;
  if ((s->like = like != NULL))
    s->p->plan = *like;
  if (!s->sh && (s->sh = curl_share_init()))
    curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  if (s->sh) /* else: the multi handle's cache, slower at thousands */
    curl_easy_setopt(s->p->curl, CURLOPT_SHARE, s->sh);
  if (s->p->auth == RF_AUTH_SESSION)
    slot_login(m, s);
  else
    slot_discover(m, s);
  return 0;
}

int erg_rf_multi_open(struct erg_rf_multi *m, int i, const struct erg_pdu_source_config *cfg) {
  return slot_open(m, i, cfg, NULL);
}

int erg_rf_multi_open_like(struct erg_rf_multi *m, int i, int from) {
  struct rf_slot *f = &m->s[from];
  if (f->op == ERG_RF_OP_OPEN || !f->p || f->src->priv != f->p)
    return -1;
  struct erg_pdu_source_config cfg = f->src->cfg;
  struct erg_rf_plan plan = f->p->plan;
  return slot_open(m, i, &cfg, &plan);
}

int erg_rf_multi_poll(struct erg_rf_multi *m, int i) {
  struct rf_slot *s = &m->s[i];
  if (s->op || !s->p || s->src->priv != s->p)
    return -1;
  s->op = ERG_RF_OP_POLL;
  s->t0_ns = erg_time_monotonic_ns();
  rf_read_begin(s->p, &s->acc);
  char why[300];
  if (rf_read_busy(s->p, why, sizeof why)) {
    slot_report(m, s, -1, why);
    return 0;
  }
  s->term = 0;
  slot_read_next(m, s);
  return 0;
}

bool erg_rf_multi_busy(const struct erg_rf_multi *m, int i) { return m->s[i].op != 0; }

static void multi_timers(struct erg_rf_multi *m, uint64_t now, uint64_t *next) {
  if (!m->nwait)
    return;
  for (int i = 0; i < m->n; i++) {
    struct rf_slot *s = &m->s[i];
    if (s->st != ST_WAIT)
      continue;
    if (s->wait_until_ns <= now) {
      m->nwait--;
      slot_send(m, s, ST_GET, "GET", s->path, NULL);
    } else if (s->wait_until_ns < *next) {
      *next = s->wait_until_ns;
    }
  }
}

static void multi_done(struct erg_rf_multi *m) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(m->cm, &left))) {
    if (msg->msg != CURLMSG_DONE)
      continue;
    struct rf_slot *s = NULL;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
    CURLcode rc = msg->data.result;
    if (s)
      slot_answer(m, s, rc);
  }
}

/* curl_multi_socket_action over epoll: each call costs what moved, not
 * every request in flight (curl_multi_perform walks them all). */
int erg_rf_multi_run(struct erg_rf_multi *m, uint64_t until_ns) {
  int running = 0;
  for (;;) {
    multi_done(m);
    uint64_t now = erg_time_monotonic_ns(), next = until_ns;
    multi_timers(m, now, &next);
    if (m->timeout_ns && m->timeout_ns <= now) {
      m->timeout_ns = 0;
      curl_multi_socket_action(m->cm, CURL_SOCKET_TIMEOUT, 0, &running);
      continue;
    }
    if (now >= until_ns)
      return running;
    if (m->timeout_ns && m->timeout_ns < next)
      next = m->timeout_ns;
    long ms = (long)((next - now + 999999ULL) / 1000000ULL);
    struct epoll_event ev[256];
    int k = epoll_wait(m->epfd, ev, 256, (int)(ms > 1000 ? 1000 : ms));
    for (int i = 0; i < k; i++) {
      int f = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
              (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
              (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
      curl_multi_socket_action(m->cm, ev[i].data.fd, f, &running);
    }
  }
}

static int multi_socket_cb(CURL *e, curl_socket_t fd, int what, void *arg, void *known) {
  struct erg_rf_multi *m = arg;
  (void)e;
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(m->epfd, EPOLL_CTL_DEL, fd, NULL); /* curl may have closed it already */
    return 0;
  }
  struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) |
                                     (what & CURL_POLL_OUT ? EPOLLOUT : 0u),
                           .data.fd = fd};
  int op = known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl(m->epfd, op, fd, &ev) != 0) /* a number curl closed and opened again */
    epoll_ctl(m->epfd, op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
  if (!known)
    curl_multi_assign(m->cm, fd, m);
  return 0;
}

static int multi_timer_cb(CURLM *cm, long timeout_ms, void *arg) {
  struct erg_rf_multi *m = arg;
  (void)cm;
  m->timeout_ns =
      timeout_ms < 0 ? 0 : erg_time_monotonic_ns() + (uint64_t)timeout_ms * 1000000ULL + 1;
  return 0;
}

void erg_rf_multi_free(struct erg_rf_multi *m, double logout_seconds) {
  if (!m)
    return;
  /* Whatever is under way stops; open sessions are closed, all at once. */
  for (int i = 0; i < m->n; i++) {
    struct rf_slot *s = &m->s[i];
    if (s->in_multi)
      curl_multi_remove_handle(m->cm, s->p->curl);
    s->in_multi = false;
    free(s->b.p);
    s->b.p = NULL;
    if (s->st == ST_WAIT)
      m->nwait--;
    slot_docs_free(s);
    if (s->p && s->op == ERG_RF_OP_OPEN) { /* never opened: no session kept */
      s->op = 0;
      s->p->discovering = false;
      s->src->priv = s->p; /* logged out below when it had logged in */
    }
    s->op = 0;
    s->st = ST_IDLE;
    struct rf_priv *p = s->src ? s->src->priv : NULL;
    s->p = p;
    if (p && p->auth == RF_AUTH_SESSION && p->token[0] && p->session_uri[0]) {
      s->op = RF_OP_CLOSE;
      s->failing = false;
      slot_send(m, s, ST_LOGOUT, "DELETE", p->session_uri, NULL);
    }
  }
  uint64_t until = erg_time_monotonic_ns() + (uint64_t)(logout_seconds * 1e9);
  for (;;) {
    bool any = false;
    for (int i = 0; i < m->n && !any; i++)
      any = m->s[i].in_multi;
    if (!any || erg_time_monotonic_ns() >= until)
      break;
    erg_rf_multi_run(m, erg_time_monotonic_ns() + 100000000ULL);
  }
  for (int i = 0; i < m->n; i++) {
    struct rf_slot *s = &m->s[i];
    if (s->in_multi)
      curl_multi_remove_handle(m->cm, s->p->curl);
    if (s->p) {
      s->p->token[0] = '\0'; /* logged out, or out of time: not again */
      rf_free(s->p);
    }
    if (s->src) {
      s->src->priv = NULL;
      s->src->driver = NULL;
    }
    curl_share_cleanup(s->sh); /* after its handles: it closes their connections */
  }
  curl_multi_cleanup(m->cm);
  close(m->epfd);
  free(m->s);
  free(m);
}
