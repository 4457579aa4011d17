// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's config file as the defaults of erg report, jobs and graph, so
 * that they find what ergd writes; and the two-pass option parse that
 * reads it before the flags that override it. */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_int.h"
#include "erg_common.h"

static int conf_cb(void *user, const char *section, const char *key, const char *value, char *why,
                   size_t whylen) {
  struct cli_ergd_conf *c = user;
  static const struct {
    const char *key;
    size_t off, len;
  } keys[] = {
      {"data_dir", offsetof(struct cli_ergd_conf, data_dir), sizeof c->data_dir},
      {"www_dir", offsetof(struct cli_ergd_conf, www_dir), sizeof c->www_dir},
      {"model_dir", offsetof(struct cli_ergd_conf, model_dir), sizeof c->model_dir},
      {"page_format", offsetof(struct cli_ergd_conf, page_format), sizeof c->page_format},
      {"rrdcached", offsetof(struct cli_ergd_conf, rrdcached), sizeof c->rrdcached},
  };
  if (!strcmp(section, "report"))
    return erg_report_config_key(&c->report, key, value, why, whylen);
  if (strcmp(section, "collector"))
    return 0;
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (!strcmp(key, keys[i].key)) {
      if (strlen(value) >= keys[i].len) {
        snprintf(why, whylen, "key '%s': value too long", key);
        return -1;
      }
      erg_strlcpy((char *)c + keys[i].off, value, keys[i].len);
      break;
    }
  if (!strcmp(key, "page_format") && strcmp(value, "png") && strcmp(value, "svg")) {
    snprintf(why, whylen, "key 'page_format': '%s' is not one of png, svg", value);
    return -1;
  }
  return 0;
}

int cli_ergd_conf_load(const char *path, struct cli_ergd_conf *c, const char *who) {
  struct erg_config_error err;
  memset(c, 0, sizeof *c);
  erg_report_config_defaults(&c->report);
  if (erg_config_parse(path, conf_cb, c, &err) != 0) {
    fprintf(stderr, "erg %s: %s\n", who, err.msg);
    return -1;
  }
  return 0;
}

int cli_parse_config_first(int argc, char **argv, const struct option *longs,
                           int (*config)(void *ctx, const char *path),
                           int (*opt)(void *ctx, int c, char *arg, const char *text), void *ctx,
                           int *operand) {
  int rc = 0;
  opterr = 0;
  optind = 0; /* a full reset: callers (tests) may parse more than once */
  for (int c; rc == 0 && (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;)
    if (c == 'C')
      rc = config(ctx, optarg);
  optind = 0;
  for (int c; rc == 0 && (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;)
    rc = opt(ctx, c, optarg, argv[optind - 1]);
  *operand = optind;
  return rc;
}

int cli_number(const char *s, double *out) {
  char why[80];
  return erg_config_double(s, 0, INFINITY, out, why, sizeof why);
}
