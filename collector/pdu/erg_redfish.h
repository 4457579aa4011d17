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

#endif
