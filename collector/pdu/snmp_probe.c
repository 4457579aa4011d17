/* What `erg pdu probe` asks an SNMP PDU beyond a poll: how many outlets,
 * their names, the whole-PDU power. Blocking, one source, through the
 * driver's erg_snmp_get. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snmp_int.h"

#define PROBE_CHUNK 16

void erg_pdu_snmp_scales(const struct erg_pdu_source *src, double *power_w, double *energy_j) {
  const struct snmp_priv *p = src->priv;
  *power_w = *energy_j = NAN;
  if (!p || !p->prof)
    return;
  *power_w = erg_snmp_power_scale(p);
  *energy_j = erg_snmp_energy_scale(p);
}

double erg_pdu_snmp_total_power(struct erg_pdu_source *src) {
  const struct erg_snmp_profile *p = erg_snmp_source_profile(src);
  char why[128];
  bool present;
  double raw;
  if (!p || !p->oid_total_power ||
      erg_snmp_get(src, &p->oid_total_power, 1, &present, &raw, NULL, 0, why, sizeof why) ||
      !(raw >= 0))
    return NAN;
  return raw * p->total_power_scale;
}

/* Template t for outlets first..first+n-1 (n <= PROBE_CHUNK): texts into
 * names (may be NULL). Returns how many exist, -1 if no answer. */
static int probe_fetch(struct erg_pdu_source *src, const char *t, int first, int n, char *names,
                       size_t namelen, char *why, size_t whylen) {
  char oids[PROBE_CHUNK][ERG_SNMP_OID_MAX];
  const char *ptrs[PROBE_CHUNK] = {0};
  bool present[PROBE_CHUNK];
  double vals[PROBE_CHUNK];
  for (int i = 0; i < n; i++) {
    if (erg_snmp_oid_expand(t, first + i, oids[i], sizeof oids[i]))
      return -1;
    ptrs[i] = oids[i];
  }
  if (erg_snmp_get(src, ptrs, n, present, vals, names, namelen, why, whylen))
    return -1;
  int found = 0;
  for (int i = 0; i < n; i++)
    found += present[i];
  return found;
}

int erg_pdu_snmp_outlet_count(struct erg_pdu_source *src, int max, char *why, size_t whylen) {
  const struct erg_snmp_profile *p = erg_snmp_source_profile(src);
  bool present;
  double d;
  if (!p)
    return -1;
  if (p->oid_count && erg_snmp_get(src, &p->oid_count, 1, &present, &d, NULL, 0, why, whylen) == 0 &&
      d > 0)
    return d < max ? (int)d : max;
  /* No count object (or no answer to it): rows exist up to the first gap. */
  const char *t = p->oid_name ? p->oid_name : p->oid_power ? p->oid_power : p->oid_energy;
  int count = 0;
  for (int first = 1; first <= max; first += PROBE_CHUNK) {
    int n = max - first + 1 < PROBE_CHUNK ? max - first + 1 : PROBE_CHUNK;
    int got = probe_fetch(src, t, first, n, NULL, 0, why, whylen);
    if (got < 0)
      return count ? count : -1;
    count = first + got - 1;
    if (got < n)
      break;
  }
  return count;
}

int erg_pdu_snmp_outlet_names(struct erg_pdu_source *src, int n, char *names, size_t namelen,
                              char *why, size_t whylen) {
  const struct erg_snmp_profile *p = erg_snmp_source_profile(src);
  memset(names, 0, (size_t)n * namelen);
  if (!p || !p->oid_name)
    return 0;
  for (int first = 1; first <= n; first += PROBE_CHUNK) {
    int k = n - first + 1 < PROBE_CHUNK ? n - first + 1 : PROBE_CHUNK;
    if (probe_fetch(src, p->oid_name, first, k, names + (size_t)(first - 1) * namelen, namelen,
                    why, whylen) < 0)
      return -1;
  }
  return 0;
}
