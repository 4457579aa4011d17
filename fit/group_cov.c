// SPDX-License-Identifier: GPL-3.0-or-later
/* A group's covariance across its members, MODEL_DIR/group/NAME.json
 * (erg_fit.h, docs/model.md "Shared meters"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "fit_int.h"

int erg_group_cov_save(const struct erg_group_cov *g, const char *path, char *why, size_t whylen) {
  json_t *members = json_array(), *rows = json_array();
  for (size_t m = 0; m < g->nnodes; m++) {
    json_t *f = json_array(), *t = json_array();
    for (size_t k = 0; k < g->nfeatures[m]; k++) {
      json_array_append_new(f, json_string(g->feature[m][k]));
      json_array_append_new(t, json_integer((json_int_t)g->term[m][k]));
    }
    json_array_append_new(
        members, json_pack("{s:s, s:o, s:o}", "node", g->nodes[m], "features", f, "terms", t));
  }
  for (size_t a = 0; a < g->nterms; a++) {
    json_t *row = json_array();
    for (size_t b = 0; b < g->nterms; b++) { /* symmetric as a covariance is */
      double v = 0.5 * (g->cov[a][b] + g->cov[b][a]);
      json_array_append_new(row, json_real(isfinite(v) ? v : 0));
    }
    json_array_append_new(rows, row);
  }
  json_t *j = json_pack("{s:s, s:f, s:s, s:o, s:o}", "group", g->name, "created_unix_seconds",
                        g->created_unix_seconds, "about",
                        "the joint fit's coefficient covariance across the members (term 0: "
                        "the group's idle); each member's features' joint terms",
                        "members", members, "matrix", rows);
  return fit_json_save(j, JSON_INDENT(1), path, "the group's covariance", why, whylen);
}

static int gc_members(struct erg_group_cov *g, json_t *members, char *why, size_t whylen) {
  size_t n = json_array_size(members);
  if (!json_is_array(members) || n < 2 || n > ERG_GROUP_MAX_NODES) {
    snprintf(why, whylen, "members: 2..%d expected", ERG_GROUP_MAX_NODES);
    return -1;
  }
  g->nnodes = n;
  for (size_t m = 0; m < n; m++) {
    const char *node;
    json_t *f, *t;
    if (json_unpack(json_array_get(members, m), "{s:s, s:o, s:o}", "node", &node, "features", &f,
                    "terms", &t) != 0 ||
        strlen(node) >= ERG_FIT_NAME_MAX || !json_is_array(f) || !json_is_array(t) ||
        json_array_size(f) != json_array_size(t) || json_array_size(f) > ERG_FIT_MAX_FEATURES) {
      snprintf(why, whylen, "member %zu: needs node, and features and terms of one length", m + 1);
      return -1;
    }
    erg_strlcpy(g->nodes[m], node, sizeof g->nodes[m]);
    g->nfeatures[m] = json_array_size(f);
    for (size_t k = 0; k < g->nfeatures[m]; k++) {
      const char *name = json_string_value(json_array_get(f, k));
      json_t *term = json_array_get(t, k);
      json_int_t v = json_is_integer(term) ? json_integer_value(term) : -1;
      if (!name || strlen(name) >= ERG_FIT_NAME_MAX || v < 1 || (size_t)v >= g->nterms) {
        snprintf(why, whylen, "member %s: feature %zu or its term (1..%zu) is not valid", node,
                 k + 1, g->nterms - 1);
        return -1;
      }
      erg_strlcpy(g->feature[m][k], name, sizeof g->feature[m][k]);
      g->term[m][k] = (size_t)v;
    }
  }
  return 0;
}

static int gc_matrix(struct erg_group_cov *g, json_t *rows, char *why, size_t whylen) {
  size_t n = json_array_size(rows);
  if (!json_is_array(rows) || n < 2 || n > ERG_GROUP_COV_TERMS) {
    snprintf(why, whylen, "matrix: 2..%d rows expected", ERG_GROUP_COV_TERMS);
    return -1;
  }
  g->nterms = n;
  for (size_t a = 0; a < n; a++) {
    json_t *row = json_array_get(rows, a);
    if (!json_is_array(row) || json_array_size(row) != n) {
      snprintf(why, whylen, "matrix: row %zu is not %zu long", a + 1, n);
      return -1;
    }
    for (size_t b = 0; b < n; b++) {
      json_t *v = json_array_get(row, b);
      g->cov[a][b] = json_is_number(v) ? json_number_value(v) : NAN;
      if (!isfinite(g->cov[a][b]) || (a == b && g->cov[a][b] < 0)) {
        snprintf(why, whylen, "matrix: entry %zu,%zu is not a finite (co)variance", a + 1, b + 1);
        return -1;
      }
    }
  }
  for (size_t a = 0; a < n; a++)
    for (size_t b = 0; b < a; b++) {
      double d = fabs(g->cov[a][b] - g->cov[b][a]), s = sqrt(g->cov[a][a] * g->cov[b][b]);
      if (d > 1e-9 * s) {
        snprintf(why, whylen, "matrix: not symmetric at %zu,%zu", a + 1, b + 1);
        return -1;
      }
    }
  return 0;
}

int erg_group_cov_load(struct erg_group_cov *g, const char *path, char *why, size_t whylen) {
  json_error_t err;
  json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err), *members, *rows;
  if (!j) {
    snprintf(why, whylen, "%s:%d: %s", path, err.line, err.text);
    return -1;
  }
  memset(g, 0, sizeof *g);
  const char *name;
  char reason[200];
  int rc = 0;
  if (json_unpack(j, "{s:s, s:F, s:o, s:o}", "group", &name, "created_unix_seconds",
                  &g->created_unix_seconds, "members", &members, "matrix", &rows) != 0 ||
      strlen(name) >= ERG_FIT_NAME_MAX) {
    snprintf(reason, sizeof reason, "needs group, created_unix_seconds, members and matrix");
    rc = -1;
  } else {
    erg_strlcpy(g->name, name, sizeof g->name);
    rc = gc_matrix(g, rows, reason, sizeof reason);
    rc = rc ? rc : gc_members(g, members, reason, sizeof reason);
  }
  json_decref(j);
  if (rc != 0) {
    snprintf(why, whylen, "%s: %s", path, reason);
    g->nterms = 0;
  }
  return rc;
}

int erg_group_cov_member(const struct erg_group_cov *g, const char *node,
                         const struct erg_model *m) {
  if (!g || !m || g->nterms == 0 || m->created_unix_seconds != g->created_unix_seconds)
    return -1;
  for (size_t i = 0; i < g->nnodes; i++) {
    if (strcmp(g->nodes[i], node) != 0 || g->nfeatures[i] != m->nfeatures)
      continue;
    for (size_t k = 0; k < m->nfeatures; k++)
      if (strcmp(g->feature[i][k], m->feature[k]) != 0)
        return -1;
    return (int)i;
  }
  return -1;
}

double erg_group_cov_cross(const struct erg_group_cov *g, size_t a, const double *xa, size_t b,
                           const double *xb) {
  double v = 0;
  for (size_t k = 0; k < g->nfeatures[a]; k++) {
    if (xa[k] == 0)
      continue;
    double row = 0;
    for (size_t e = 0; e < g->nfeatures[b]; e++)
      row += g->cov[g->term[a][k]][g->term[b][e]] * xb[e];
    v += xa[k] * row;
  }
  return isfinite(v) ? v : 0;
}
