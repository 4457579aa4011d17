#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "erg_common.h"

struct config_ctx {
  erg_config_handler h;
  void *user;
  char why[400];
  int failed;
};

static int config_ini_cb(void *user, const char *section, const char *key,
                         const char *value) {
  struct config_ctx *ctx = user;
  if (ctx->failed)
    return 1;
  if (ctx->h(ctx->user, section, key, value, ctx->why, sizeof ctx->why) != 0) {
    ctx->failed = 1;
    return 0; /* inih reports this line number */
  }
  return 1;
}

int erg_config_parse(const char *path, erg_config_handler h, void *user,
                     struct erg_config_error *err) {
  struct config_ctx ctx = {.h = h, .user = user};
  int rc = ini_parse(path, config_ini_cb, &ctx);
  if (rc == 0)
    return 0;
  if (rc == -1)
    snprintf(err->msg, sizeof err->msg, "%s: cannot open: %s", path, strerror(errno));
  else if (rc == -2)
    snprintf(err->msg, sizeof err->msg, "%s: out of memory while parsing", path);
  else if (ctx.failed)
    snprintf(err->msg, sizeof err->msg, "%s:%d: %s", path, rc, ctx.why);
  else
    snprintf(err->msg, sizeof err->msg, "%s:%d: syntax error", path, rc);
  return -1;
}

int erg_config_double(const char *value, double min, double max, double *out,
                      char *why, size_t whylen) {
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  if (errno || end == value || *end) {
    snprintf(why, whylen, "'%s' is not a number", value);
    return -1;
  }
  if (v < min || v > max) {
    snprintf(why, whylen, "%g is outside [%g, %g]", v, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int erg_config_long(const char *value, long min, long max, long *out, char *why,
                    size_t whylen) {
  char *end;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (errno || end == value || *end) {
    snprintf(why, whylen, "'%s' is not an integer", value);
    return -1;
  }
  if (v < min || v > max) {
    snprintf(why, whylen, "%ld is outside [%ld, %ld]", v, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int erg_config_bool(const char *value, bool *out, char *why, size_t whylen) {
  static const char *yes[] = {"1", "yes", "true", "on"};
  static const char *no[] = {"0", "no", "false", "off"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(value, yes[i]) == 0) {
      *out = true;
      return 0;
    }
    if (strcasecmp(value, no[i]) == 0) {
      *out = false;
      return 0;
    }
  }
  snprintf(why, whylen, "'%s' is not a boolean (yes/no)", value);
  return -1;
}
