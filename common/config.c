// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "erg_common.h"

/* Sections and (section, key) pairs seen so far, for duplicates. */
struct config_seen {
  char *name; /* "section" or "section]key" */
  int line;
};

struct config_ctx {
  erg_config_handler h;
  erg_config_line_handler hl; /* instead of h */
  void *user;
  FILE *f;
  int line;       /* lines read so far */
  int indented;   /* the line being parsed starts with a blank */
  char last[300]; /* section]key of the previous handler call */
  char why[400];
  int failed; /* a handler or check refused; fail_line: ours, 0: inih's */
  int fail_line;
  struct config_seen *seen;
  size_t nseen, cap;
  struct erg_name_index index; /* over seen[], 2 * cap slots */
};

/* Names seen are found by hash: a file of 10,000 sections is as many
 * lookups, each against every name before. */
static const char *config_seen_name(const void *seen, size_t i) {
  return ((const struct config_seen *)seen)[i].name;
}

/* Doubles the names array and rebuilds the index at twice its size. */
static int config_grow(struct config_ctx *ctx) {
  size_t cap = ctx->cap ? 2 * ctx->cap : 64;
  struct config_seen *s = realloc(ctx->seen, cap * sizeof *s);
  if (!s)
    return -1;
  ctx->seen = s;
  if (erg_name_index_rebuild(&ctx->index, 2 * cap, config_seen_name, s, ctx->nseen) != 0)
    return -1;
  ctx->cap = cap;
  return 0;
}

/* The line where name was seen first, 0 if new (then it is recorded);
 * -1 out of memory. */
static int config_seen(struct config_ctx *ctx, const char *name) {
  uint32_t *slot = erg_name_index_slot(&ctx->index, name, config_seen_name, ctx->seen);
  if (slot && *slot)
    return ctx->seen[*slot - 1].line;
  if (ctx->nseen == ctx->cap && config_grow(ctx) != 0)
    return -1;
  char *copy = strdup(name);
  if (!copy)
    return -1;
  ctx->seen[ctx->nseen++] = (struct config_seen){copy, ctx->line};
  *erg_name_index_slot(&ctx->index, name, config_seen_name, ctx->seen) = (uint32_t)ctx->nseen;
  return 0;
}

static void config_fail(struct config_ctx *ctx, int line) {
  ctx->failed = 1;
  ctx->fail_line = line;
}

/* inih's line reader, which also sees what its handler does not: section
 * headers (a repeated one would merge silently), continuation lines and
 * lines longer than inih's buffer (it would cut them and parse the rest
 * as a line of its own). */
static char *config_reader(char *str, int num, void *stream) {
  struct config_ctx *ctx = stream;
  if (ctx->failed || !fgets(str, num, ctx->f))
    return NULL;
  ctx->line++;
  size_t n = strlen(str);
  if (n + 1 >= (size_t)num && str[n - 1] != '\n' && !feof(ctx->f)) {
    snprintf(ctx->why, sizeof ctx->why, "line longer than %d bytes", num - 2);
    config_fail(ctx, ctx->line);
    return NULL;
  }
  const char *p = str;
  if (ctx->line == 1 && !strncmp(p, "\xEF\xBB\xBF", 3))
    p += 3;
  ctx->indented = *p == ' ' || *p == '\t';
  while (*p == ' ' || *p == '\t')
    p++;
  const char *end = *p == '[' ? strchr(p, ']') : NULL;
  if (end) {
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
    int first = config_seen(ctx, name);
    if (first != 0) {
      if (first < 0)
        snprintf(ctx->why, sizeof ctx->why, "out of memory");
      else
        snprintf(ctx->why, sizeof ctx->why,
                 "section [%.200s] again (first at line %d): one section per name", name, first);
      config_fail(ctx, ctx->line);
      return NULL;
    }
    ctx->last[0] = '\0';
  }
  return str;
}

static int config_ini_cb(void *user, const char *section, const char *key, const char *value) {
  struct config_ctx *ctx = user;
  if (ctx->failed)
    return 1;
  char sk[300];
  snprintf(sk, sizeof sk, "%s]%s", section, key);
  /* inih passes an indented line after a key as more of its value, in a
   * second call that would replace the first: refused, not half-read. */
  if (ctx->indented && !strcmp(sk, ctx->last)) {
    snprintf(ctx->why, sizeof ctx->why, "indented line continues key '%.100s': a value is one line",
             key);
    config_fail(ctx, ctx->line);
    return 1;
  }
  int first = config_seen(ctx, sk);
  if (first != 0) {
    if (first < 0)
      snprintf(ctx->why, sizeof ctx->why, "out of memory");
    else
      snprintf(ctx->why, sizeof ctx->why, "key '%.100s' in [%.100s] again (first at line %d)", key,
               section, first);
    config_fail(ctx, ctx->line);
    return 1;
  }
  erg_strlcpy(ctx->last, sk, sizeof ctx->last);
  int rc = ctx->hl ? ctx->hl(ctx->user, ctx->line, section, key, value, ctx->why, sizeof ctx->why)
                   : ctx->h(ctx->user, section, key, value, ctx->why, sizeof ctx->why);
  if (rc != 0) {
    ctx->failed = 1;
    return 0; /* inih reports this line number */
  }
  return 1;
}

static int config_parse(const char *path, erg_config_handler h, erg_config_line_handler hl,
                        void *user, struct erg_config_error *err) {
  struct config_ctx ctx = {.h = h, .hl = hl, .user = user};
  ctx.f = fopen(path, "r");
  if (!ctx.f) {
    snprintf(err->msg, sizeof err->msg, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  int rc = ini_parse_stream(config_reader, &ctx, config_ini_cb, &ctx);
  int read_error = ferror(ctx.f);
  fclose(ctx.f);
  for (size_t i = 0; i < ctx.nseen; i++)
    free(ctx.seen[i].name);
  free(ctx.seen);
  erg_name_index_free(&ctx.index);
  if (ctx.failed && ctx.fail_line)
    snprintf(err->msg, sizeof err->msg, "%s:%d: %s", path, ctx.fail_line, ctx.why);
  else if (rc == 0 && read_error)
    snprintf(err->msg, sizeof err->msg, "%s: read error", path);
  else if (rc == 0)
    return 0;
  else if (rc == -2)
    snprintf(err->msg, sizeof err->msg, "%s: out of memory while parsing", path);
  else if (ctx.failed)
    snprintf(err->msg, sizeof err->msg, "%s:%d: %s", path, rc, ctx.why);
  else
    snprintf(err->msg, sizeof err->msg, "%s:%d: syntax error", path, rc);
  return -1;
}

int erg_config_parse(const char *path, erg_config_handler h, void *user,
                     struct erg_config_error *err) {
  return config_parse(path, h, NULL, user, err);
}

int erg_config_parse_lines(const char *path, erg_config_line_handler h, void *user,
                           struct erg_config_error *err) {
  return config_parse(path, NULL, h, user, err);
}

/* NaN compares false with everything, so a plain range test lets it
 * through ("nan" read as a poll period polled once, then never); inf and
 * NaN are refused wherever a number is read. */
int erg_config_double(const char *value, double min, double max, double *out, char *why,
                      size_t whylen) {
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  if (errno || end == value || *end || !isfinite(v)) {
    snprintf(why, whylen, "'%.64s' is not a finite number", value);
    return -1;
  }
  if (!(v >= min && v <= max)) {
    snprintf(why, whylen, "%g is outside [%g, %g]", v, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int erg_config_long(const char *value, long min, long max, long *out, char *why, size_t whylen) {
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

/* What zmq_bind/zmq_connect would take, so a typo fails at config check,
 * not as an agent that never connects. */
int erg_config_endpoint(const char *value, char *why, size_t whylen) {
  if (!strncmp(value, "ipc://", 6) && value[6])
    return 0;
  if (!strncmp(value, "tcp://", 6)) {
    const char *host = value + 6, *colon = strrchr(host, ':');
    long port = 0;
    char *end = NULL;
    if (colon && colon > host) {
      errno = 0;
      port = strtol(colon + 1, &end, 10);
      if (!strcmp(colon + 1, "*"))
        port = 1, end = (char *)colon + 2;
    }
    bool ok =
        colon && colon > host && end != colon + 1 && !*end && !errno && port >= 1 && port <= 65535;
    /* IPv6 literals come bracketed; else a name, an address or '*'. */
    if (ok && host[0] == '[')
      ok = colon[-1] == ']' && colon - host > 2;
    for (const char *p = host; ok && host[0] != '[' && p < colon; p++)
      ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '.' || *p == '-' || *p == '_' || *p == '*';
    if (ok)
      return 0;
  }
  snprintf(why, whylen,
           "'%.64s' is not a ZeroMQ endpoint (tcp://HOST:PORT, PORT 1..65535, or "
           "ipc://PATH)",
           value);
  return -1;
}
