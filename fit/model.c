// SPDX-License-Identifier: GPL-3.0-or-later
/* Model file (JSON, docs/model.md "Model file"): save atomically, load
 * with checks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "erg_common.h"
#include "fit_int.h"

#ifndef ERG_VERSION
#define ERG_VERSION "unknown"
#endif

/* JSON has no NaN: an undefined metric is null. */
static json_t *model_real(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *fit_metrics_to_json(const char *method, const struct erg_fit_metrics *x) {
  return json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "method", method, "cells",
                   (json_int_t)x->cells, "cells_dynamic", (json_int_t)x->cells_dynamic, "mae_watts",
                   model_real(x->cells ? x->mae_watts : NAN), "rmse_watts",
                   model_real(x->cells ? x->rmse_watts : NAN), "mape_total_percent",
                   model_real(x->mape_total_percent), "mape_dynamic_percent",
                   model_real(x->mape_dynamic_percent), "r2", model_real(x->r2));
}

const char *erg_curve_shape_name(enum erg_curve_shape s) {
  switch (s) {
    case ERG_CURVE_MONOTONE:
      return "monotone";
    case ERG_CURVE_CONVEX:
      return "convex";
    case ERG_CURVE_AUTO:
      break;
  }
  return "auto";
}

int erg_curve_shape_parse(const char *s) {
  for (int k = ERG_CURVE_AUTO; k <= ERG_CURVE_CONVEX; k++)
    if (strcmp(s, erg_curve_shape_name((enum erg_curve_shape)k)) == 0)
      return k;
  return -1;
}

const char *erg_idle_source_name(enum erg_idle_source s) {
  switch (s) {
    case ERG_IDLE_FROM_RECORDED:
      return "idle_profile";
    case ERG_IDLE_FROM_PROFILE:
      return "idle_rows";
    case ERG_IDLE_FROM_GROUP_PROFILE:
      return "group_idle_profile";
    case ERG_IDLE_FROM_GROUP_FIT:
      return "group_fit";
    case ERG_IDLE_FROM_FIT:
      break;
  }
  return "fit";
}

/* The group keys (optional; docs/model.md, "Shared meters"). */
static json_t *model_group_json(const struct erg_model *m) {
  const struct erg_model_group *g = &m->group;
  json_t *nodes = json_array(), *pair = json_array();
  for (size_t i = 0; i < g->nnodes; i++)
    json_array_append_new(nodes, json_string(g->nodes[i]));
  for (size_t i = 0; i < 2 && g->max_correlation_nodes[i][0]; i++)
    json_array_append_new(pair, json_string(g->max_correlation_nodes[i]));
  json_t *j = json_pack(
      "{s:s, s:o, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "group", g->name, "group_nodes",
      nodes, "group_form", g->form, "group_idle_watts", model_real(g->idle_watts), "idle_split",
      g->idle_split, "idle_split_fraction", model_real(g->idle_fraction), "idle_split_scale",
      model_real(g->idle_scale), "group_condition_number", model_real(g->condition_number),
      "group_max_correlation", model_real(g->max_correlation), "group_max_correlation_nodes", pair,
      "metrics_of", "group");
  return j;
}

json_t *fit_model_to_json(const struct erg_model *m) {
  json_t *features = json_array();
  for (size_t k = 0; k < m->nfeatures; k++)
    json_array_append_new(features, json_pack("{s:s, s:f, s:f}", "name", m->feature[k],
                                              "coefficient_watts_per_unit", m->coef[k],
                                              "training_max", m->feature_max[k]));
  json_t *j = json_pack(
      "{s:s, s:i, s:s, s:s, s:f, s:f, s:s, s:f, s:s, s:I, s:o, s:{s:o, s:o, s:I}, s:o}", "format",
      "erg-model", "version", m->version, "erg_version", ERG_VERSION, "node", m->node,
      "created_unix_seconds", m->created_unix_seconds, "step_seconds", m->step_seconds, "equation",
      "power_watts = idle_watts + sum(coefficient_watts_per_unit * feature)", "idle_watts",
      m->idle_watts, "idle_source", erg_idle_source_name(m->idle_source), "idle_profile_rows",
      (json_int_t)m->idle_rows, "features", features, "training", "first_unix_seconds",
      model_real(m->train_first_unix_seconds), "last_unix_seconds",
      model_real(m->train_last_unix_seconds), "cells", (json_int_t)m->train_rows, "validation",
      fit_metrics_to_json(m->validation, &m->metrics));
  /* Optional keys, so that older readers and files stay compatible. */
  if (j && m->ncpu > 0)
    json_object_set_new(j, "ncpu", json_real(m->ncpu));
  if (j && m->utilization_max > 0)
    json_object_set_new(j, "training_max_utilization", json_real(m->utilization_max));
  if (j && m->curve_shape != ERG_CURVE_AUTO)
    json_object_set_new(j, "curve_shape", json_string(erg_curve_shape_name(m->curve_shape)));
  if (j && m->has_idle_profile)
    json_object_set_new(j, "idle_profile", fit_idle_profile_to_json(&m->idle_profile));
  if (j && m->group.name[0]) {
    json_t *g = model_group_json(m);
    json_object_update(j, g);
    json_decref(g);
  }
  json_t *cov = j ? fit_cov_to_json(m) : NULL;
  if (cov)
    json_object_set_new(j, "coefficient_covariance", cov);
  if (j && m->nleft_out) {
    json_t *a = json_array();
    for (size_t k = 0; k < m->nleft_out; k++)
      json_array_append_new(a,
                            json_pack("{s:s, s:f}", "name", m->left_out[k], "t", m->left_out_t[k]));
    json_object_set_new(j, "left_out_features", a);
  }
  return j;
}

int erg_model_check(const struct erg_model *m, char *why, size_t whylen) {
  if (!(m->idle_watts >= 0 && m->idle_watts <= ERG_FIT_MAX_WATTS)) {
    snprintf(why, whylen, "idle power %g W is outside 0..%g W", m->idle_watts, ERG_FIT_MAX_WATTS);
    return -1;
  }
  bool any = m->idle_watts > 0;
  double full = m->idle_watts;
  for (size_t k = 0; k < m->nfeatures; k++) {
    /* A term at the training maximum is power the node drew; without a
     * maximum, no unit of any feature is worth more than the bound. */
    double top = m->coef[k] * m->feature_max[k];
    if (!(m->coef[k] >= 0 && m->coef[k] <= ERG_FIT_MAX_WATTS) || !(m->feature_max[k] >= 0) ||
        !isfinite(m->feature_max[k]) || !(top <= ERG_FIT_MAX_WATTS)) {
      snprintf(why, whylen,
               "coefficient of %s is %g W per unit (%g W at its training maximum; at most "
               "%g W per unit)",
               m->feature[k], m->coef[k], top, ERG_FIT_MAX_WATTS);
      return -1;
    }
    full += top;
    any |= m->coef[k] > 0;
  }
  if (!(full <= ERG_FIT_MAX_WATTS)) {
    snprintf(why, whylen, "the model predicts %g W at its training maxima (at most %g W)", full,
             ERG_FIT_MAX_WATTS);
    return -1;
  }
  if (!(m->ncpu >= 0 && m->ncpu <= 1e6) || !(m->utilization_max >= 0) ||
      !isfinite(m->utilization_max)) {
    snprintf(why, whylen, "ncpu %g or training utilisation maximum %g is no number of a node",
             m->ncpu, m->utilization_max);
    return -1;
  }
  if (!any) {
    snprintf(why, whylen,
             "the model predicts 0 W for every cell (idle 0 W, every coefficient "
             "0): the journal's measured power says nothing about this node");
    return -1;
  }
  return 0;
}

int fit_json_save(json_t *j, size_t flags, const char *path, const char *what, char *why,
                  size_t whylen) {
  char *text = j ? json_dumps(j, flags | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(j);
  if (!text) {
    snprintf(why, whylen, "%s: cannot encode %s", path, what);
    return -1;
  }
  size_t len = strlen(text);
  text[len] = '\n'; /* json_dumps leaves room only for the NUL: rewrite it */
  char *buf = realloc(text, len + 2);
  if (!buf) {
    free(text);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  buf[len + 1] = '\0';
  int rc = erg_write_file_atomic(path, buf, len + 1);
  if (rc != 0)
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
  free(buf);
  return rc;
}

int erg_model_save(const struct erg_model *m, const char *path, char *why, size_t whylen) {
  return fit_json_save(fit_model_to_json(m), JSON_INDENT(2), path, "model", why, whylen);
}

/* Reads an optional number (null = NaN); -1 if present but not a number. */
static int model_get_real(json_t *obj, const char *key, double *out) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) {
    *out = NAN;
    return 0;
  }
  if (!json_is_number(v))
    return -1;
  *out = json_number_value(v);
  return 0;
}

static int model_load_metrics(struct erg_model *m, json_t *v, char *why, size_t whylen) {
  const char *method = "none";
  json_int_t cells = 0, cells_dyn = 0;
  json_error_t err;
  if (json_unpack_ex(v, &err, 0, "{s?s, s?I, s?I}", "method", &method, "cells", &cells,
                     "cells_dynamic", &cells_dyn) != 0 ||
      cells < 0 || cells_dyn < 0) {
    snprintf(why, whylen, "validation: %s", err.text);
    return -1;
  }
  erg_strlcpy(m->validation, method, sizeof m->validation);
  m->metrics.cells = (size_t)cells;
  m->metrics.cells_dynamic = (size_t)cells_dyn;
  struct erg_fit_metrics *x = &m->metrics;
  if (model_get_real(v, "mae_watts", &x->mae_watts) ||
      model_get_real(v, "rmse_watts", &x->rmse_watts) ||
      model_get_real(v, "mape_total_percent", &x->mape_total_percent) ||
      model_get_real(v, "mape_dynamic_percent", &x->mape_dynamic_percent) ||
      model_get_real(v, "r2", &x->r2)) {
    snprintf(why, whylen, "validation: a metric is not a number");
    return -1;
  }
  return 0;
}

static int model_load_features(struct erg_model *m, json_t *features, char *why, size_t whylen) {
  if (json_array_size(features) > ERG_FIT_MAX_FEATURES) {
    snprintf(why, whylen, "more than %d features", ERG_FIT_MAX_FEATURES);
    return -1;
  }
  size_t k;
  json_t *f;
  json_array_foreach(features, k, f) {
    const char *name;
    double coef, xmax = 0;
    json_error_t err;
    if (json_unpack_ex(f, &err, 0, "{s:s, s:F, s?F}", "name", &name, "coefficient_watts_per_unit",
                       &coef, "training_max", &xmax) != 0) {
      snprintf(why, whylen, "feature %zu: %s", k + 1, err.text);
      return -1;
    }
    if (!*name || strlen(name) >= ERG_FIT_NAME_MAX || !isfinite(coef) || coef < 0) {
      snprintf(why, whylen, "feature %zu: empty or long name, or coefficient not finite and >= 0",
               k + 1);
      return -1;
    }
    for (size_t e = 0; e < k; e++)
      if (strcmp(m->feature[e], name) == 0) {
        snprintf(why, whylen, "feature '%s' twice", name);
        return -1;
      }
    erg_strlcpy(m->feature[k], name, ERG_FIT_NAME_MAX);
    m->coef[k] = coef;
    m->feature_max[k] = isfinite(xmax) && xmax > 0 ? xmax : 0;
  }
  m->nfeatures = json_array_size(features);
  return 0;
}

/* A string of at most len − 1 bytes into out; -1 when it is not one. */
static int model_copy_string(json_t *v, char *out, size_t len) {
  if (!json_is_string(v) || json_string_length(v) >= len)
    return -1;
  erg_strlcpy(out, json_string_value(v), len);
  return 0;
}

/* The optional group keys; a file without "group" is a node's own model. */
static int model_load_group(struct erg_model *m, json_t *j, char *why, size_t whylen) {
  struct erg_model_group *g = &m->group;
  json_t *name = json_object_get(j, "group"), *nodes = json_object_get(j, "group_nodes");
  json_t *pair = json_object_get(j, "group_max_correlation_nodes");
  if (!name)
    return 0;
  bool bad = model_copy_string(name, g->name, sizeof g->name) != 0 || !g->name[0] ||
             !json_is_array(nodes) || json_array_size(nodes) > ERG_GROUP_MAX_NODES ||
             model_copy_string(json_object_get(j, "group_form"), g->form, sizeof g->form) != 0 ||
             model_copy_string(json_object_get(j, "idle_split"), g->idle_split,
                               sizeof g->idle_split) != 0 ||
             (pair && (!json_is_array(pair) || json_array_size(pair) > 2));
  for (size_t i = 0; !bad && i < json_array_size(nodes); i++)
    bad = model_copy_string(json_array_get(nodes, i), g->nodes[i], sizeof g->nodes[i]) != 0;
  for (size_t i = 0; !bad && i < json_array_size(pair); i++)
    bad = model_copy_string(json_array_get(pair, i), g->max_correlation_nodes[i],
                            sizeof g->max_correlation_nodes[i]) != 0;
  bad = bad || model_get_real(j, "group_idle_watts", &g->idle_watts) ||
        model_get_real(j, "idle_split_fraction", &g->idle_fraction) ||
        model_get_real(j, "idle_split_scale", &g->idle_scale) ||
        model_get_real(j, "group_condition_number", &g->condition_number) ||
        model_get_real(j, "group_max_correlation", &g->max_correlation);
  if (bad) {
    snprintf(why, whylen,
             "group: group, group_form and idle_split must be strings, group_nodes "
             "an array of at most %d names, the numbers numbers",
             ERG_GROUP_MAX_NODES);
    return -1;
  }
  g->nnodes = json_array_size(nodes);
  return 0;
}

static int model_from_json(struct erg_model *m, json_t *j, char *why, size_t whylen) {
  const char *format, *node, *idle_source = "fit", *shape = "auto";
  json_t *features, *validation = NULL, *training = NULL, *profile = NULL;
  json_int_t idle_rows = 0, train_rows = 0;
  double first = NAN, last = NAN, step = 0, created = 0;
  json_error_t err;
  memset(m, 0, sizeof *m);
  if (json_unpack_ex(
          j, &err, 0, "{s:s, s:i, s:s, s:F, s?s, s?I, s:o, s?F, s?F, s?o, s?o, s?F, s?o, s?F, s?s}",
          "format", &format, "version", &m->version, "node", &node, "idle_watts", &m->idle_watts,
          "idle_source", &idle_source, "idle_profile_rows", &idle_rows, "features", &features,
          "step_seconds", &step, "created_unix_seconds", &created, "validation", &validation,
          "training", &training, "ncpu", &m->ncpu, "idle_profile", &profile,
          "training_max_utilization", &m->utilization_max, "curve_shape", &shape) != 0) {
    snprintf(why, whylen, "%s", err.text);
    return -1;
  }
  if (training && (model_get_real(training, "first_unix_seconds", &first) ||
                   model_get_real(training, "last_unix_seconds", &last) ||
                   json_unpack(training, "{s?I}", "cells", &train_rows))) {
    snprintf(why, whylen, "training: bad first/last time or cell count");
    return -1;
  }
  if (strcmp(format, "erg-model") != 0 || m->version != ERG_MODEL_VERSION) {
    snprintf(why, whylen, "not an erg model of version %d", ERG_MODEL_VERSION);
    return -1;
  }
  if (!isfinite(m->idle_watts) || m->idle_watts < 0 || !json_is_array(features) ||
      strlen(node) >= ERG_FIT_NAME_MAX || idle_rows < 0 || train_rows < 0) {
    snprintf(why, whylen, "idle_watts must be finite and >= 0, features an array");
    return -1;
  }
  erg_strlcpy(m->node, node, sizeof m->node);
  int cs = erg_curve_shape_parse(shape);
  if (cs < 0) {
    snprintf(why, whylen, "curve_shape must be auto, monotone or convex");
    return -1;
  }
  m->curve_shape = (enum erg_curve_shape)cs;
  /* Before recorded profiles, "idle_profile" named the flag-8 rows. */
  m->idle_source =
      profile ? ERG_IDLE_FROM_RECORDED
      : strcmp(idle_source, "idle_profile") == 0 || strcmp(idle_source, "idle_rows") == 0
          ? ERG_IDLE_FROM_PROFILE
      : strcmp(idle_source, "group_idle_profile") == 0 ? ERG_IDLE_FROM_GROUP_PROFILE
      : strcmp(idle_source, "group_fit") == 0          ? ERG_IDLE_FROM_GROUP_FIT
                                                       : ERG_IDLE_FROM_FIT;
  if (profile && fit_idle_profile_from_json(&m->idle_profile, profile, why, whylen) != 0)
    return -1;
  m->has_idle_profile = profile != NULL;
  if (!isfinite(m->ncpu) || m->ncpu < 0 || !isfinite(m->utilization_max) ||
      m->utilization_max < 0 || m->utilization_max > 1) {
    snprintf(why, whylen, "ncpu must be finite and >= 0, training_max_utilization in [0, 1]");
    return -1;
  }
  m->idle_rows = (size_t)idle_rows;
  m->step_seconds = step;
  m->created_unix_seconds = created;
  m->train_first_unix_seconds = first;
  m->train_last_unix_seconds = last;
  m->train_rows = (size_t)train_rows;
  erg_strlcpy(m->validation, "none", sizeof m->validation);
  m->metrics.mape_total_percent = m->metrics.mape_dynamic_percent = m->metrics.r2 = NAN;
  if (model_load_features(m, features, why, whylen) != 0 ||
      model_load_group(m, j, why, whylen) != 0 ||
      fit_cov_from_json(m, json_object_get(j, "coefficient_covariance"), why, whylen) != 0)
    return -1;
  return validation ? model_load_metrics(m, validation, why, whylen) : 0;
}

int erg_model_load(struct erg_model *m, const char *path, char *why, size_t whylen) {
  json_error_t err;
  json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (!j) {
    snprintf(why, whylen, "%s:%d: %s", path, err.line, err.text);
    return -1;
  }
  char reason[200];
  int rc = model_from_json(m, j, reason, sizeof reason);
  json_decref(j);
  if (rc != 0)
    snprintf(why, whylen, "%s: %s", path, reason);
  return rc;
}
