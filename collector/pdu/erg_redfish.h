// SPDX-License-Identifier: GPL-3.0-or-later
/* The Redfish meter driver's extras beyond struct erg_pdu_driver: what the
 * probe asks (collector/pdu/redfish.c). */
#ifndef ERG_REDFISH_H
#define ERG_REDFISH_H

#include "erg_pdu.h"
#include "redfish_parse.h"

#define ERG_RF_PROBE_MAX_REQ 1024

struct erg_rf_probe_result {
  struct erg_rf_discovery d;
  int discover_rc; /* 0 a plan; -1 refused (discover_why) */
  char discover_why[1024];
  char warning[256];     /* http://, tls_insecure */
  char auth_used[64];    /* "session", "basic", "none" */
  double watts, joules;  /* the plan's reading now; NAN none */
  char reading_why[256]; /* no reading or a bad value: why */
  /* The BMC's own time of the reading (a Sensor's ReadingTime, its
   * clock; 0 none) and when the answer arrived (CLOCK_REALTIME, ns). */
  uint32_t reading_time_s;
  uint64_t arrival_ns;
  int nreq;
  struct {
    char uri[ERG_RF_URI_MAX];
    int status;     /* HTTP status, 0 no answer */
    double seconds; /* how long the request took */
  } req[ERG_RF_PROBE_MAX_REQ];
};

/* Connects as a source of c would (TLS, credentials, session), walks the
 * whole tree (every sensor) and reads the chosen reading once. 0: r is
 * filled (the discovery may still have refused: r->discover_rc); -1 with
 * a reason: c refused (bad host, password file); -2: the BMC failed
 * (unreachable, TLS, credentials). */
int erg_redfish_probe(const struct erg_pdu_source_config *c, struct erg_rf_probe_result *r,
                      char *why, size_t whylen);

/* host as the driver reads it: "https://H[:P]" or "http://H[:P]" with no
 * path; a bare "H[:P]" is https. 0, or -1 with a reason. */
int erg_redfish_base_url(const char *host, char *base, size_t len, bool *plain_http, char *why,
                         size_t whylen);

/* What can be told of a redfish source's config without the BMC: the
 * host, credentials that go together, a chassis under /redfish/v1/, a pin
 * in curl's form, TLS settings that do not contradict. 0, or -1 with a
 * reason (erg check-config and ergd refuse the file). */
int erg_redfish_config_check(const struct erg_pdu_source_config *c, char *why, size_t whylen);

/* ---- ergd's Redfish meters over one curl multi handle (redfish_multi.c):
 * one thread drives every meter's requests at once; per meter, what the
 * blocking driver does (session, 401 -> log in again, 429/503 backoff,
 * redirects on the BMC, per-request timeout, body cap). Not thread-safe:
 * one thread calls all of these. */
struct erg_rf_multi;
enum { ERG_RF_OP_OPEN = 1, ERG_RF_OP_POLL = 2 };
/* An open or a poll of slot i ended: rc 0 or -1 with why; r (a poll
 * only) its reading, as the driver's poll gives a channel. Called from
 * within erg_rf_multi_* ; may start slot i's next operation. */
typedef void (*erg_rf_done_fn)(void *arg, int i, int op, int rc, const struct erg_pdu_reading *r,
                               const char *why);
/* Slots srcs[0..n-1] (the caller's, kept until _free). NULL with a reason. */
struct erg_rf_multi *erg_rf_multi_new(struct erg_pdu_source **srcs, int n, erg_rf_done_fn done,
                                      void *arg, char *why, size_t whylen);
/* Start slot i's open (log in, discover) with cfg into srcs[i], or a
 * poll of an open slot; -1 when it is busy (or, a poll, not open). A
 * failure to start is reported through done. */
int erg_rf_multi_open(struct erg_rf_multi *m, int i, const struct erg_pdu_source_config *cfg);
/* Opens slot i as another connection to open slot from's BMC: its own
 * handle and (session authentication) its own session, from's plan
 * without a discovery. -1 when i is busy or from not open. */
int erg_rf_multi_open_like(struct erg_rf_multi *m, int i, int from);
int erg_rf_multi_poll(struct erg_rf_multi *m, int i);
bool erg_rf_multi_busy(const struct erg_rf_multi *m, int i);
/* Moves every request on until until_ns (CLOCK_MONOTONIC); the number
 * still under way. */
int erg_rf_multi_run(struct erg_rf_multi *m, uint64_t until_ns);
/* Stops what is under way, logs out of every session at once (waiting up
 * to logout_seconds), frees; the slots are closed. NULL is fine. */
void erg_rf_multi_free(struct erg_rf_multi *m, double logout_seconds);

#endif
