// SPDX-License-Identifier: GPL-3.0-or-later
/* The arguments every `erg pdu probe` driver takes alike (cli/probe.c,
 * cli/probe_ipmi.c, cli/probe_redfish.c), here so that none calls back into
 * another. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"
#include "erg_pdu.h"

int cli_probe_copy(char *dst, size_t len, const char *src, const char *what) {
  if (strlen(src) >= len) {
    fprintf(stderr, "erg pdu probe: %s too long\n", what);
    return -1;
  }
  strcpy(dst, src);
  return 0;
}

/* "host", "host:port", "[v6]:port" or a bare IPv6 address. */
int cli_probe_host(const char *arg, struct erg_pdu_source_config *c) {
  const char *colon = strrchr(arg, ':');
  char host[sizeof c->host];
  if (arg[0] == '[') {
    const char *end = strchr(arg, ']');
    if (!end || (size_t)(end - arg - 1) >= sizeof host)
      return -1;
    snprintf(host, sizeof host, "%.*s", (int)(end - arg - 1), arg + 1);
    colon = end[1] == ':' ? end + 1 : NULL;
  } else if (colon && strchr(arg, ':') == colon) {
    snprintf(host, sizeof host, "%.*s", (int)(colon - arg), arg);
  } else {
    snprintf(host, sizeof host, "%s", arg);
    colon = NULL;
  }
  if (colon) {
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 1 || port > 65535)
      return -1;
    c->port = (int)port;
  }
  return cli_probe_copy(c->host, sizeof c->host, host, "--host");
}

int cli_probe_text(int o, const char *arg, const struct cli_probe_text *texts, size_t n,
                   const struct option *opts, struct erg_pdu_source_config *c, int *bad) {
  for (size_t i = 0; i < n; i++) {
    if (texts[i].code != o)
      continue;
    const char *name = "option";
    for (const struct option *p = opts; p->name; p++)
      if (p->val == o)
        name = p->name;
    char what[64];
    snprintf(what, sizeof what, "--%s", name);
    *bad = cli_probe_copy((char *)c + texts[i].off, texts[i].len, arg, what) != 0;
    return 1;
  }
  return 0;
}

int cli_probe_retries(const char *arg, struct erg_pdu_source_config *c) {
  c->retries = atoi(arg);
  return c->retries < 0 || c->retries > 10 ? -1 : 0;
}
