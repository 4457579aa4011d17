// SPDX-License-Identifier: GPL-3.0-or-later
/* Redfish BMC meters (issue 33, docs/bmc.md): libcurl for HTTPS, the
 * rules of redfish_parse.c for what to read. One source = one BMC chassis
 * (the node's, or an enclosure's as a shared meter); every channel gets
 * that reading. Discovery walks the tree once, at open; each poll GETs
 * only the resources that hold the reading. A source polls on its own
 * meter thread (collector/meters.c), so a slow BMC delays nobody else.
 *
 * Safety: certificates checked unless the config says tls_insecure (a CA
 * file or a pinned public key otherwise), redirects followed only on the
 * same BMC (one to another host is refused, naming where it pointed), http and https only, bodies
 * capped, every request timed out, 429/503 backed off (Retry-After, else doubling up to a minute),
 * the password read from a file nobody else may read. */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "erg_common.h"
#include "erg_redfish.h"

#include "redfish_int.h"

static pthread_once_t rf_once = PTHREAD_ONCE_INIT;
static void rf_global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int erg_redfish_base_url(const char *host, char *base, size_t len, bool *plain_http, char *why,
                         size_t whylen) {
  const char *rest = host;
  *plain_http = false;
  if (!strncasecmp(host, "https://", 8)) {
    rest = host + 8;
  } else if (!strncasecmp(host, "http://", 7)) {
    rest = host + 7;
    *plain_http = true;
  } else if (strstr(host, "://")) {
    snprintf(why, whylen, "host '%s': only https:// (or http://) is spoken", host);
    return -1;
  }
  size_t n = strcspn(rest, "/?#");
  if (n == 0 || rest[n + (rest[n] == '/')] != '\0' || strchr(rest, '@') ||
      strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_") < n) {
    snprintf(why, whylen, "host '%s' is not https://HOST[:PORT] (no path, no user)", host);
    return -1;
  }
  if ((size_t)snprintf(base, len, "%s://%.*s", *plain_http ? "http" : "https", (int)n, rest) >=
      len) {
    snprintf(why, whylen, "host '%s' too long", host);
    return -1;
  }
  return 0;
}

int erg_redfish_config_check(const struct erg_pdu_source_config *c, char *why, size_t whylen) {
  char base[160];
  bool plain;
  if (!c->host[0]) {
    snprintf(why, whylen, "no host (https://HOST[:PORT])");
    return -1;
  }
  if (erg_redfish_base_url(c->host, base, sizeof base, &plain, why, whylen))
    return -1;
  if (!c->user[0] != !c->password_file[0]) {
    snprintf(why, whylen, "user and password_file go together");
    return -1;
  }
  if (c->auth[0] && strcmp(c->auth, "none") && !c->user[0]) {
    snprintf(why, whylen, "auth = %s needs user and password_file", c->auth);
    return -1;
  }
  if (c->chassis[0] && strncmp(c->chassis, "/redfish/v1/", 12)) {
    snprintf(why, whylen, "chassis '%s' is not an @odata.id under /redfish/v1/", c->chassis);
    return -1;
  }
  if (c->pinned_public_key[0] && strncmp(c->pinned_public_key, "sha256//", 8)) {
    snprintf(why, whylen, "pinned_public_key wants sha256//BASE64 (docs/bmc.md)");
    return -1;
  }
  if (c->tls_insecure && (c->pinned_public_key[0] || c->ca_file[0])) {
    snprintf(why, whylen, "tls_verify = no with %s: which one is meant?",
             c->ca_file[0] ? "ca_file" : "pinned_public_key");
    return -1;
  }
  return 0;
}

/* The password file: its first line; refused when others may read it. */
static int rf_password(const char *path, char *out, size_t len, char *why, size_t whylen) {
  struct stat st;
  FILE *f = fopen(path, "r");
  if (!f || fstat(fileno(f), &st) != 0) {
    snprintf(why, whylen, "password_file %s: %s", path, strerror(errno));
    if (f)
      fclose(f);
    return -1;
  }
  if (st.st_mode & (S_IROTH | S_IWOTH)) {
    snprintf(why, whylen,
             "password_file %s is readable by everyone (mode %03o): refused (chmod 600, owned "
             "by the user ergd runs as)",
             path, (unsigned)(st.st_mode & 0777));
    fclose(f);
    return -1;
  }
  if (!fgets(out, (int)len, f)) {
    snprintf(why, whylen, "password_file %s is empty", path);
    fclose(f);
    return -1;
  }
  fclose(f);
  out[strcspn(out, "\r\n")] = '\0';
  return 0;
}

static size_t rf_write(char *data, size_t size, size_t n, void *user) {
  struct rf_buf *b = user;
  size_t add = size * n;
  if (b->n + add > RF_BODY_MAX) {
    b->over = true;
    return 0; /* curl stops with CURLE_WRITE_ERROR */
  }
  if (b->n + add + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 16384;
    while (cap < b->n + add + 1)
      cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
      return 0;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, data, add);
  b->n += add;
  b->p[b->n] = '\0';
  return add;
}

static void rf_header_value(const char *line, size_t n, const char *name, char *out, size_t len) {
  size_t k = strlen(name);
  if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
    return;
  const char *v = line + k + 1;
  while (*v == ' ' && v < line + n)
    v++;
  size_t m = (size_t)(line + n - v);
  while (m && (v[m - 1] == '\r' || v[m - 1] == '\n' || v[m - 1] == ' '))
    m--;
  if (m < len) {
    memcpy(out, v, m);
    out[m] = '\0';
  }
}

static size_t rf_header(char *line, size_t size, size_t n, void *user) {
  struct rf_priv *p = user;
  size_t len = size * n;
  char ra[32] = "";
  rf_header_value(line, len, "X-Auth-Token", p->h_token, sizeof p->h_token);
  rf_header_value(line, len, "Location", p->h_location, sizeof p->h_location);
  rf_header_value(line, len, "Retry-After", ra, sizeof ra);
  if (ra[0])
    p->h_retry_after = atof(ra);
  return len;
}

int rf_headers(struct rf_priv *p) {
  curl_slist_free_all(p->hdrs);
  p->hdrs = NULL;
  struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
  if (h)
    h = curl_slist_append(h, "OData-Version: 4.0");
  if (h)
    h = curl_slist_append(h, "Content-Type: application/json");
  if (h && p->token[0]) {
    char t[600];
    snprintf(t, sizeof t, "X-Auth-Token: %s", p->token);
    h = curl_slist_append(h, t);
  }
  p->hdrs = h;
  return h ? 0 : -1;
}

int rf_url(const struct rf_priv *p, const char *path, char *url, size_t len, char *why,
           size_t whylen) {
  const char *frag = strchr(path, '#');
  int plen = frag ? (int)(frag - path) : (int)strlen(path);
  if (!strncasecmp(path, "http://", 7) || !strncasecmp(path, "https://", 8)) {
    /* An absolute link: only to this BMC. */
    if (strncasecmp(path, p->base, strlen(p->base)) ||
        (path[strlen(p->base)] != '/' && path[strlen(p->base)] != '\0')) {
      snprintf(why, whylen, "%.*s: a link to another host: refused", plen, path);
      return -1;
    }
    snprintf(url, len, "%.*s", plen, path);
  } else {
    snprintf(url, len, "%s%s%.*s", p->base, path[0] == '/' ? "" : "/", plen, path);
  }
  return 0;
}

void rf_prepare(struct rf_priv *p, const char *method, const char *url, const char *body,
                struct rf_buf *b) {
  CURL *c = p->curl;
  memset(b, 0, sizeof *b);
  p->h_token[0] = p->h_location[0] = '\0';
  p->h_retry_after = 0;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->hdrs);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  if (!strcmp(method, "POST")) {
    curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS, body ? body : "");
  } else if (strcmp(method, "GET")) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  }
}

int rf_finish(struct rf_priv *p, CURLcode rc, const char *method, const char *path, double secs,
              long *status, struct rf_buf *b, char *why, size_t whylen) {
  const char *frag = strchr(path, '#');
  int plen = frag ? (int)(frag - path) : (int)strlen(path);
  *status = 0;
  if (rc == CURLE_OK)
    curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, status);
  if (p->log && p->log->nreq < ERG_RF_PROBE_MAX_REQ) {
    int i = p->log->nreq++;
    snprintf(p->log->req[i].uri, sizeof p->log->req[i].uri, "%s %.*s", method, plen, path);
    p->log->req[i].status = (int)*status;
    p->log->req[i].seconds = secs;
  }
  if (rc != CURLE_OK) {
    if (b->over || rc == CURLE_FILESIZE_EXCEEDED)
      snprintf(why, whylen, "%s %.*s: the answer is larger than %u bytes: refused", method, plen,
               path, RF_BODY_MAX);
    else
      snprintf(why, whylen, "%s %s%.*s: %s", method, strncasecmp(path, "http", 4) ? p->base : "",
               plen, path, curl_easy_strerror(rc));
    free(b->p);
    b->p = NULL;
    return -1;
  }
  return 0;
}

/* One request: method, path (an @odata.id or the session's URI), body.
 * 0 with *status (and body in b) when the BMC answered; -1 with a reason
 * when it did not (unreachable, TLS, timeout, body too large). */
static int rf_request(struct rf_priv *p, const char *method, const char *path, const char *body,
                      long *status, struct rf_buf *b, char *why, size_t whylen) {
  char url[600];
  memset(b, 0, sizeof *b);
  *status = 0;
  if (rf_url(p, path, url, sizeof url, why, whylen))
    return -1;
  rf_prepare(p, method, url, body, b);
  uint64_t t0 = erg_time_monotonic_ns();
  CURLcode rc = curl_easy_perform(p->curl);
  double secs = (double)(erg_time_monotonic_ns() - t0) / 1e9;
  return rf_finish(p, rc, method, path, secs, status, b, why, whylen);
}

static void rf_backoff(struct rf_priv *p) {
  double s = p->h_retry_after > 0 ? p->h_retry_after
                                  : (p->backoff_seconds > 0 ? 2 * p->backoff_seconds : 1.0);
  if (s > RF_BACKOFF_MAX_SECONDS)
    s = RF_BACKOFF_MAX_SECONDS;
  p->backoff_seconds = s;
  p->backoff_until_ns = erg_time_monotonic_ns() + (uint64_t)(s * 1e9);
}

char *rf_login_body(const struct rf_priv *p) {
  json_t *o = json_pack("{s:s,s:s}", "UserName", p->user, "Password", p->pass);
  char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return body;
}

void rf_login_body_free(char *body) {
  if (body) {
    memset(body, 0, strlen(body));
    free(body);
  }
}

int rf_login_answer(struct rf_priv *p, long status, char *why, size_t whylen) {
  if (status == 401 || status == 403) {
    snprintf(why, whylen, "session login as '%s': wrong credentials (HTTP %ld)", p->user, status);
    return -1;
  }
  if (status < 200 || status >= 300 || !p->h_token[0]) {
    snprintf(why, whylen, "session login: HTTP %ld%s", status,
             p->h_token[0] ? "" : " without an X-Auth-Token");
    return -1;
  }
  snprintf(p->token, sizeof p->token, "%s", p->h_token);
  snprintf(p->session_uri, sizeof p->session_uri, "%s", p->h_location);
  return rf_headers(p) ? -1 : 0;
}

static int rf_login(struct rf_priv *p, char *why, size_t whylen) {
  char *body = rf_login_body(p);
  if (!body) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  p->token[0] = '\0';
  rf_headers(p);
  long status;
  struct rf_buf b;
  int rc = rf_request(p, "POST", RF_SESSIONS_URI, body, &status, &b, why, whylen);
  rf_login_body_free(body);
  free(b.p);
  if (rc)
    return -1;
  return rf_login_answer(p, status, why, whylen);
}

static void rf_logout(struct rf_priv *p) {
  if (p->auth != RF_AUTH_SESSION || !p->token[0] || !p->session_uri[0])
    return;
  long status;
  struct rf_buf b;
  char why[200];
  if (rf_request(p, "DELETE", p->session_uri, NULL, &status, &b, why, sizeof why) == 0)
    free(b.p);
  p->token[0] = '\0';
}

enum rf_action rf_answer(struct rf_priv *p, long status, const char *path, int attempt, int hops,
                         double *wait_seconds, char *why, size_t whylen) {
  /* A redirect on this BMC (/redfish/v1 to /redfish/v1/) is followed, up
   * to 3; one to another host is refused. */
  size_t bl = strlen(p->base);
  bool here = p->h_location[0] == '/' ||
              (!strncasecmp(p->h_location, p->base, bl) && p->h_location[bl] == '/');
  *wait_seconds = 0;
  if (status >= 300 && status < 400 && here && hops < 3)
    return RF_ACT_REDIRECT;
  if (status == 401 && p->auth == RF_AUTH_SESSION && attempt == 0)
    return RF_ACT_LOGIN;
  if (status == 401 || status == 403) {
    snprintf(why, whylen, "GET %s: HTTP %ld: %s", path, status,
             p->auth == RF_AUTH_NONE ? "the BMC wants credentials (user, password_file)"
                                     : "wrong credentials");
    return RF_ACT_FAIL;
  }
  if ((status == 429 || status == 503) && p->discovering && attempt == 0) {
    /* Discovery has many GETs to make: wait as asked (up to 5 s), once. */
    *wait_seconds = p->h_retry_after > 0 && p->h_retry_after < 5 ? p->h_retry_after : 1;
    return RF_ACT_RETRY;
  }
  if (status == 429 || status == 503) {
    rf_backoff(p);
    snprintf(why, whylen, "GET %s: HTTP %ld (busy): backing off %.0f s", path, status,
             p->backoff_seconds);
    return RF_ACT_FAIL;
  }
  if (status >= 300 && status < 400) {
    snprintf(why, whylen, "GET %s: redirected (HTTP %ld) to '%.120s': %s", path, status,
             p->h_location, hops >= 3 ? "too many redirects" : "another host: refused");
    return RF_ACT_FAIL;
  }
  if (status != 200) {
    snprintf(why, whylen, "GET %s: HTTP %ld", path, status);
    return RF_ACT_FAIL;
  }
  p->backoff_seconds = 0;
  return RF_ACT_OK;
}

json_t *rf_body_json(const struct rf_buf *b, const char *path, char *why, size_t whylen) {
  json_error_t e;
  json_t *j = json_loadb(b->p ? b->p : "", b->n, JSON_REJECT_DUPLICATES, &e);
  if (!j || !json_is_object(j)) {
    snprintf(why, whylen, "GET %s: not a JSON object (%s, line %d)", path,
             j ? "another JSON value" : e.text, e.line);
    json_decref(j);
    return NULL;
  }
  return j;
}

json_t *rf_body_reading(const struct rf_buf *b, const char *path, char *why, size_t whylen) {
  char inner[200];
  json_t *j = erg_rf_json_skim(b->p ? b->p : "", b->n, erg_rf_reading_keys, inner, sizeof inner);
  if (!j)
    snprintf(why, whylen, "GET %s: not a JSON object (%s)", path, inner);
  return j;
}

/* GET path as JSON, logging in again once on 401 (a session that expired). */
static json_t *rf_get_json(struct rf_priv *p, const char *path0, char *why, size_t whylen) {
  char path[ERG_RF_URI_MAX + 160];
  int hops = 0;
  snprintf(path, sizeof path, "%s", path0);
  for (int attempt = 0; attempt < 2; attempt++) {
    long status;
    struct rf_buf b;
    double wait;
    if (rf_request(p, "GET", path, NULL, &status, &b, why, whylen))
      return NULL;
    enum rf_action a = rf_answer(p, status, path, attempt, hops, &wait, why, whylen);
    if (a != RF_ACT_OK)
      free(b.p);
    switch (a) {
      case RF_ACT_REDIRECT:
        snprintf(path, sizeof path, "%s", p->h_location);
        hops++;
        attempt--;
        continue;
      case RF_ACT_LOGIN:
        if (rf_login(p, why, whylen))
          return NULL;
        continue;
      case RF_ACT_RETRY:
        erg_time_sleep_ns((uint64_t)(wait * 1e9));
        continue;
      case RF_ACT_FAIL:
        return NULL;
      case RF_ACT_OK:
        break;
    }
    json_t *j = rf_body_json(&b, path, why, whylen);
    free(b.p);
    return j;
  }
  snprintf(why, whylen, "GET %s: still 401 after logging in again, or still busy", path);
  return NULL;
}

static json_t *rf_getter(void *ctx, const char *uri, char *why, size_t whylen) {
  return rf_get_json(ctx, uri, why, whylen);
}

void rf_free(struct rf_priv *p) {
  if (!p)
    return;
  if (p->curl)
    rf_logout(p);
  curl_slist_free_all(p->hdrs);
  if (p->curl)
    curl_easy_cleanup(p->curl);
  memset(p->pass, 0, sizeof p->pass);
  free(p);
}

/* A connected, logged-in handle for c; NULL with a reason (rc -1: c is
 * refused; -2: the BMC failed). */
struct rf_priv *rf_setup(const struct erg_pdu_source_config *c, struct erg_rf_probe_result *log,
                         int *rc, char *why, size_t whylen) {
  pthread_once(&rf_once, rf_global_init);
  *rc = -1;
  struct rf_priv *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  p->log = log;
  if (erg_redfish_base_url(c->host, p->base, sizeof p->base, &p->plain_http, why, whylen))
    goto fail;
  if (c->user[0] && !c->password_file[0]) {
    snprintf(why, whylen, "user '%s' without password_file", c->user);
    goto fail;
  }
  if (c->password_file[0] && rf_password(c->password_file, p->pass, sizeof p->pass, why, whylen))
    goto fail;
  snprintf(p->user, sizeof p->user, "%s", c->user);
  if (!c->auth[0])
    p->auth = c->user[0] ? RF_AUTH_SESSION : RF_AUTH_NONE;
  else if (!strcmp(c->auth, "session") || !strcmp(c->auth, "basic"))
    p->auth = c->auth[0] == 's' ? RF_AUTH_SESSION : RF_AUTH_BASIC;
  else if (!strcmp(c->auth, "none"))
    p->auth = RF_AUTH_NONE;
  else {
    snprintf(why, whylen, "auth '%s' is not session, basic or none", c->auth);
    goto fail;
  }
  if (p->auth != RF_AUTH_NONE && !c->user[0]) {
    snprintf(why, whylen, "auth %s needs user and password_file", c->auth);
    goto fail;
  }
  if (!(p->curl = curl_easy_init()) || rf_headers(p)) {
    snprintf(why, whylen, "curl: out of memory");
    goto fail;
  }
  CURL *h = p->curl;
  double to = c->timeout_seconds > 0 ? c->timeout_seconds : 10;
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(to * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(to * 1000));
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE, (long)RF_BODY_MAX);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, rf_write);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, rf_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, p);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "erg");
  /* Thousands of handles (redfish_multi.c): 8 KiB receive buffers, not 16. */
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 8192L);
  if (c->tls_insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (c->pinned_public_key[0]) {
    /* The pin is the trust: a BMC's self-signed certificate has no chain. */
    curl_easy_setopt(h, CURLOPT_PINNEDPUBLICKEY, c->pinned_public_key);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca_file[0])
      curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
  }
  if (p->auth == RF_AUTH_BASIC) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, p->user);
    curl_easy_setopt(h, CURLOPT_PASSWORD, p->pass);
  }
  *rc = 0;
  return p;
fail:
  rf_free(p);
  return NULL;
}

/* rf_setup, then logged in (a session): NULL with a reason (rc -1: c is
 * refused; -2: the BMC failed). */
static struct rf_priv *rf_connect(const struct erg_pdu_source_config *c,
                                  struct erg_rf_probe_result *log, int *rc, char *why,
                                  size_t whylen) {
  struct rf_priv *p = rf_setup(c, log, rc, why, whylen);
  if (p && p->auth == RF_AUTH_SESSION && rf_login(p, why, whylen)) {
    *rc = -2;
    rf_free(p);
    return NULL;
  }
  return p;
}

static int rf_open(struct erg_pdu_source *src, char *why, size_t whylen) {
  int rc;
  struct rf_priv *p = rf_connect(&src->cfg, NULL, &rc, why, whylen);
  if (!p)
    return -1;
  struct erg_rf_discovery *d = calloc(1, sizeof *d);
  char inner[1024];
  p->discovering = true;
  int drc = d ? erg_rf_discover(rf_getter, p, src->cfg.chassis, false, d, inner, sizeof inner) : -1;
  p->discovering = false;
  if (drc) {
    snprintf(why, whylen, "%s: %s", src->cfg.host, d ? inner : "out of memory");
    free(d);
    rf_free(p);
    return -1;
  }
  p->plan = d->plan;
  free(d);
  src->priv = p;
  if (src->cfg.nchannels == 0) {
    src->cfg.nchannels = 1;
    src->cfg.channels[0] = 1;
  }
  return 0;
}

void rf_read_begin(struct rf_priv *p, struct rf_accum *a) {
  memset(a, 0, sizeof *a);
  a->r.watts = a->r.energy_joules = NAN;
  p->bad_why[0] = '\0';
}

int rf_read_busy(const struct rf_priv *p, char *why, size_t whylen) {
  uint64_t now = erg_time_monotonic_ns();
  if (now >= p->backoff_until_ns)
    return 0;
  snprintf(why, whylen, "the BMC said it is busy (429/503): backing off %.0f s more",
           (double)(p->backoff_until_ns - now) / 1e9);
  return -1;
}

const char *rf_read_uri(const struct rf_priv *p, int term) {
  const struct erg_rf_plan *pl = &p->plan;
  if (term < pl->npower)
    return pl->power[term].uri;
  return term == pl->npower && pl->have_energy ? pl->energy.uri : NULL;
}

void rf_read_term(struct rf_priv *p, struct rf_accum *a, int term, json_t *doc) {
  const struct erg_rf_plan *pl = &p->plan;
  bool energy = term >= pl->npower;
  const struct erg_rf_term *t = energy ? &pl->energy : &pl->power[term];
  char inner[300];
  double v;
  int rc = erg_rf_term_value(t, doc, pl->rating_watts, &v, inner, sizeof inner);
  uint64_t at_ns;
  if (rc == 0 && erg_rf_reading_time(doc, &at_ns) == 0 &&
      at_ns / 1000000000ULL > a->r.device_time_s)
    a->r.device_time_s = (uint32_t)(at_ns / 1000000000ULL);
  if (rc == 0 && energy) {
    a->r.energy_joules = v;
    /* A whole-joule counter steps by 1 J; kWh ones by what they show. */
    a->r.energy_resolution_joules = t->to_si >= 1 && v == floor(v) ? t->to_si : 0;
  } else if (rc == 0) {
    a->sum += v;
  } else {
    a->power_none |= !energy;
    snprintf(a->why, sizeof a->why, "%s", inner);
    if (rc < 0) {
      a->r.bad_value = true;
      snprintf(p->bad_why, sizeof p->bad_why, "%.199s", inner);
    }
  }
}

int rf_read_end(struct rf_priv *p, struct rf_accum *a, char *why, size_t whylen) {
  /* An enclosure's inputs: all of them or no reading. */
  if (p->plan.npower && !a->power_none)
    a->r.watts = a->sum;
  a->r.t_ns = erg_time_realtime_ns(); /* when the last answer arrived */
  a->r.power_source = ERG_PDU_W_MEASURED;
  a->r.ok = isfinite(a->r.watts) || isfinite(a->r.energy_joules);
  if (!a->r.ok)
    snprintf(why, whylen, "%s", a->why[0] ? a->why : "no reading");
  return a->r.ok ? 0 : -1;
}

/* Reads the plan once: *r, or -1 with a reason (nothing read). */
static int rf_read(struct rf_priv *p, struct erg_pdu_reading *r, char *why, size_t whylen) {
  struct rf_accum a;
  rf_read_begin(p, &a);
  *r = a.r;
  if (rf_read_busy(p, why, whylen))
    return -1;
  const char *uri;
  for (int t = 0; (uri = rf_read_uri(p, t)); t++) {
    json_t *doc = rf_get_json(p, uri, why, whylen);
    if (!doc) {
      *r = a.r;
      return -1;
    }
    rf_read_term(p, &a, t, doc);
    json_decref(doc);
  }
  int rc = rf_read_end(p, &a, why, whylen);
  *r = a.r;
  return rc;
}

static int rf_poll(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                   size_t whylen) {
  struct rf_priv *p = src->priv;
  struct erg_pdu_reading r;
  int rc = rf_read(p, &r, why, whylen);
  for (int i = 0; i < src->cfg.nchannels; i++)
    out[i] = r;
  return rc;
}

static void rf_close(struct erg_pdu_source *src) {
  rf_free(src->priv);
  src->priv = NULL;
}

static int rf_bad_value(const struct erg_pdu_source *src, int channel, char *why, size_t whylen) {
  (void)channel;
  const struct rf_priv *p = src->priv;
  if (!p || !p->bad_why[0])
    return -1;
  snprintf(why, whylen, "%s", p->bad_why);
  return 0;
}

const struct erg_pdu_driver erg_pdu_driver_redfish = {.name = "redfish",
                                                      .open = rf_open,
                                                      .poll = rf_poll,
                                                      .close = rf_close,
                                                      .bad_value = rf_bad_value};

int erg_redfish_probe(const struct erg_pdu_source_config *c, struct erg_rf_probe_result *r,
                      char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  r->watts = r->joules = NAN;
  int rc;
  struct rf_priv *p = rf_connect(c, r, &rc, why, whylen);
  if (!p)
    return rc;
  snprintf(r->auth_used, sizeof r->auth_used, "%s",
           p->auth == RF_AUTH_SESSION ? "session"
           : p->auth == RF_AUTH_BASIC ? "basic"
                                      : "none");
  if (p->plain_http)
    snprintf(r->warning, sizeof r->warning,
             "http:// sends credentials and readings in clear text: for simulators and tests");
  else if (c->tls_insecure)
    snprintf(r->warning, sizeof r->warning,
             "tls_insecure: the BMC's certificate is not checked (anyone on the path can answer)");
  p->discovering = true;
  r->discover_rc = erg_rf_discover(rf_getter, p, c->chassis, true, &r->d, r->discover_why,
                                   sizeof r->discover_why);
  p->discovering = false;
  /* Whatever it refused, a service root that did not answer is a failure. */
  if (r->discover_rc && r->d.nfound == 0 && strstr(r->discover_why, "/redfish/v1")) {
    snprintf(why, whylen, "%s", r->discover_why);
    rf_free(p);
    return -2;
  }
  if (r->discover_rc == 0 || r->d.plan.npower || r->d.plan.have_energy) {
    struct erg_pdu_reading rd;
    p->plan = r->d.plan;
    if (rf_read(p, &rd, r->reading_why, sizeof r->reading_why) == 0 || rd.bad_value) {
      r->watts = rd.watts;
      r->joules = rd.energy_joules;
      r->reading_time_s = rd.device_time_s;
      r->arrival_ns = rd.t_ns;
    }
  }
  rf_free(p);
  return 0;
}
