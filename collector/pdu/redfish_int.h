// SPDX-License-Identifier: GPL-3.0-or-later
/* The Redfish driver's insides shared by redfish.c (one request at a
 * time: discovery for the probe, and a meter's blocking open and poll) and
 * redfish_multi.c (every meter of ergd over one curl multi handle). Not a
 * public header. */
#ifndef ERG_REDFISH_INT_H
#define ERG_REDFISH_INT_H

#include <curl/curl.h>
#include <stdint.h>

#include "erg_redfish.h"

#define RF_BODY_MAX (4u << 20) /* a resource larger than this is refused */
#define RF_BACKOFF_MAX_SECONDS 60.0

struct rf_buf {
  char *p;
  size_t n, cap;
  bool over;
};

struct rf_priv {
  CURL *curl;
  struct curl_slist *hdrs; /* rebuilt when the token changes */
  char base[160];
  bool plain_http;
  char user[64], pass[256];
  int auth; /* RF_AUTH_* */
  char token[512], session_uri[ERG_RF_URI_MAX];
  struct erg_rf_plan plan;
  uint64_t backoff_until_ns;
  double backoff_seconds;
  char bad_why[200];
  /* Answers of the last request */
  char h_token[512], h_location[ERG_RF_URI_MAX];
  double h_retry_after;
  bool discovering; /* a 503 is waited out once, not failed */
  /* Probe: the request log (NULL otherwise). */
  struct erg_rf_probe_result *log;
};

enum { RF_AUTH_NONE, RF_AUTH_BASIC, RF_AUTH_SESSION };
#define RF_SESSIONS_URI "/redfish/v1/SessionService/Sessions"

/* A handle for c: its password read, its curl easy handle set up (TLS,
 * timeouts, body cap), not logged in. NULL with a reason (rc -1). */
struct rf_priv *rf_setup(const struct erg_pdu_source_config *c, struct erg_rf_probe_result *log,
                         int *rc, char *why, size_t whylen);
/* Logs out (blocking) when a session is open, then frees; NULL is fine. */
void rf_free(struct rf_priv *p);
int rf_headers(struct rf_priv *p);

/* A request in three steps: the URL of path (an @odata.id, or an absolute
 * link only to this BMC: -1 with a reason otherwise); the easy handle set
 * for it (b gets the body); after curl ran it, the outcome: 0 with the
 * HTTP status, or -1 with a reason (no answer, body too large). */
int rf_url(const struct rf_priv *p, const char *path, char *url, size_t len, char *why,
           size_t whylen);
void rf_prepare(struct rf_priv *p, const char *method, const char *url, const char *body,
                struct rf_buf *b);
int rf_finish(struct rf_priv *p, CURLcode rc, const char *method, const char *path, double secs,
              long *status, struct rf_buf *b, char *why, size_t whylen);

/* What to do with a GET's answer. */
enum rf_action {
  RF_ACT_OK,       /* 200: the body is the resource */
  RF_ACT_REDIRECT, /* to p->h_location, on this BMC */
  RF_ACT_LOGIN,    /* 401 with a session: log in again, then GET again */
  RF_ACT_RETRY,    /* busy during discovery: GET again after *wait_seconds */
  RF_ACT_FAIL,     /* why says it (429/503 also start the backoff) */
};
enum rf_action rf_answer(struct rf_priv *p, long status, const char *path, int attempt, int hops,
                         double *wait_seconds, char *why, size_t whylen);
json_t *rf_body_json(const struct rf_buf *b, const char *path, char *why, size_t whylen);
/* A poll's answer: only the members a reading is taken from are built
 * (erg_rf_json_skim); the whole body is still checked as JSON. */
json_t *rf_body_reading(const struct rf_buf *b, const char *path, char *why, size_t whylen);

/* Session login: the POST body (NULL: no memory; wiped by _free), and its
 * answer taken (the token, the session's URI), or -1 with a reason. */
char *rf_login_body(const struct rf_priv *p);
void rf_login_body_free(char *body);
int rf_login_answer(struct rf_priv *p, long status, char *why, size_t whylen);

/* One reading of p->plan: begin; -1 with a reason while backing off;
 * GET each rf_read_uri(p, 0, 1, ...) until NULL and hand each resource to
 * rf_read_term; end: 0 with a->r, or -1 with a reason (a->r.ok false). */
struct rf_accum {
  struct erg_pdu_reading r;
  double sum;
  bool power_none;
  char why[300];
};
void rf_read_begin(struct rf_priv *p, struct rf_accum *a);
int rf_read_busy(const struct rf_priv *p, char *why, size_t whylen);
const char *rf_read_uri(const struct rf_priv *p, int term);
void rf_read_term(struct rf_priv *p, struct rf_accum *a, int term, json_t *doc);
int rf_read_end(struct rf_priv *p, struct rf_accum *a, char *why, size_t whylen);

#endif
