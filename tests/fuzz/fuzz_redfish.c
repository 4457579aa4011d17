// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: Redfish discovery and reading (collector/pdu/
 * redfish_parse.c), what a BMC's answers reach. The input is JSON
 * documents separated by NUL bytes: a GET of URI answers the document
 * whose "@odata.id" is URI, else the one a hash of URI picks (a text that
 * is no JSON: the GET failed). Discovery runs over them (every chassis,
 * then every sensor), and each term of the plan is read from them. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redfish_parse.h"

#define MAX_DOCS 32

struct docs {
  int n;
  const char *p[MAX_DOCS];
  size_t len[MAX_DOCS];
  json_t *j[MAX_DOCS]; /* parsed once; NULL: not JSON */
};

static json_t *fuzz_get(void *ctx, const char *uri, char *why, size_t whylen) {
  struct docs *d = ctx;
  if (!d->n) {
    snprintf(why, whylen, "no documents");
    return NULL;
  }
  size_t ul = strcspn(uri, "#");
  while (ul > 1 && uri[ul - 1] == '/')
    ul--;
  for (int i = 0; i < d->n; i++) {
    const char *id = json_string_value(json_object_get(d->j[i], "@odata.id"));
    size_t il = id ? strlen(id) : 0;
    while (il > 1 && id[il - 1] == '/')
      il--;
    if (id && il == ul && !strncmp(id, uri, ul))
      return json_incref(d->j[i]);
  }
  uint32_t h = 2166136261u;
  for (const char *c = uri; *c; c++)
    h = (h ^ (uint8_t)*c) * 16777619u;
  json_t *j = d->j[h % (uint32_t)d->n];
  if (!j) {
    snprintf(why, whylen, "not JSON");
    return NULL;
  }
  return json_incref(j);
}

static void check_term(struct docs *d, const struct erg_rf_term *t, double rating) {
  char why[256] = "";
  json_t *doc = fuzz_get(d, t->uri, why, sizeof why);
  if (!doc)
    return;
  double v = NAN;
  why[0] = '\0';
  int rc = erg_rf_term_value(t, doc, rating, &v, why, sizeof why);
  json_decref(doc);
  if (rc == 0 && !(isfinite(v) && v >= 0))
    abort(); /* a reading is a finite, non-negative number */
  if (rc == 0 &&
      (t->kind == ERG_RF_POWERCONTROL || t->kind == ERG_RF_ENV_POWER ||
       t->kind == ERG_RF_SENSOR_POWER) &&
      v > ERG_RF_MAX_WATTS)
    abort();
  if (rc != 0 && !why[0])
    abort(); /* no reading always says why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct erg_rf_discovery disc;
  struct docs d = {0};
  const char *p = (const char *)data, *end = p + size;
  while (p <= end && d.n < MAX_DOCS) {
    const char *nul = memchr(p, 0, (size_t)(end - p));
    size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
    json_error_t e;
    d.p[d.n] = p;
    d.len[d.n] = len;
    d.j[d.n++] = json_loadb(p, len, JSON_REJECT_DUPLICATES, &e);
    if (!nul)
      break;
    p = nul + 1;
  }
  for (int full = 0; full < 2; full++) {
    char why[1024] = "";
    int rc = erg_rf_discover(fuzz_get, &d, full ? "/redfish/v1/Chassis/1" : "", full, &disc, why,
                             sizeof why);
    if (rc != 0 && !why[0])
      abort(); /* a refusal always says why */
    if (disc.plan.npower < 0 || disc.plan.npower > ERG_RF_MAX_TERMS ||
        disc.nfound > ERG_RF_MAX_FOUND)
      abort();
    for (int i = 0; i < disc.plan.npower; i++)
      check_term(&d, &disc.plan.power[i], disc.plan.rating_watts);
    if (disc.plan.have_energy)
      check_term(&d, &disc.plan.energy, disc.plan.rating_watts);
  }
  for (int i = 0; i < d.n; i++)
    json_decref(d.j[i]);
  return 0;
}
