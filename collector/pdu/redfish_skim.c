// SPDX-License-Identifier: GPL-3.0-or-later
/* A poll's answer, parsed only where the reading is (redfish_parse.h,
 * erg_rf_json_skim): the whole body is checked against JSON's grammar
 * (RFC 8259: strings and their escapes, UTF-8, numbers, literals,
 * nesting), as json_loadb would, but only the top-level members a
 * reading needs are built into a json_t. A BMC's Power resource is a few
 * kB of supplies, voltages and OEM blocks around one number: building
 * all of it was most of the poll thread's time at thousands of BMCs. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "redfish_parse.h"

#define SKIM_DEPTH_MAX 512

struct skim {
  const char *p, *end, *err;
  const char *what;
};

static bool skim_fail(struct skim *k, const char *at, const char *what) {
  if (!k->err) {
    k->err = at;
    k->what = what;
  }
  return false;
}

static void skim_ws(struct skim *k) {
  while (k->p < k->end && (*k->p == ' ' || *k->p == '\t' || *k->p == '\n' || *k->p == '\r'))
    k->p++;
}

static int skim_hex(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* \uXXXX at p (after the backslash and u): the code unit, or -1. */
static long skim_u4(const char *p, const char *end) {
  if (end - p < 4)
    return -1;
  long v = 0;
  for (int i = 0; i < 4; i++) {
    int h = skim_hex(p[i]);
    if (h < 0)
      return -1;
    v = v * 16 + h;
  }
  return v;
}

/* A string at k->p (its opening quote); k->p after the closing one. */
static bool skim_string(struct skim *k) {
  const char *p = k->p + 1, *end = k->end;
  while (p < end) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') {
      k->p = p + 1;
      return true;
    }
    if (c < 0x20)
      return skim_fail(k, p, "control character in a string");
    if (c == '\\') {
      if (++p >= end)
        break;
      if (*p && strchr("\"\\/bfnrt", *p)) {
        p++;
        continue;
      }
      if (*p != 'u')
        return skim_fail(k, p, "invalid escape");
      long u = skim_u4(p + 1, end);
      if (u < 0)
        return skim_fail(k, p, "invalid \\u escape");
      p += 5;
      if (u >= 0xDC00 && u <= 0xDFFF)
        return skim_fail(k, p, "invalid Unicode surrogate");
      if (u >= 0xD800 && u <= 0xDBFF) { /* a pair: the low half follows */
        long lo = end - p >= 6 && p[0] == '\\' && p[1] == 'u' ? skim_u4(p + 2, end) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
          return skim_fail(k, p, "invalid Unicode surrogate pair");
        p += 6;
      }
      continue;
    }
    if (c < 0x80) {
      p++;
      continue;
    }
    /* UTF-8: a lead byte and its continuation bytes, shortest form. */
    int n = c >= 0xC2 && c <= 0xDF   ? 1
            : c >= 0xE0 && c <= 0xEF ? 2
            : c >= 0xF0 && c <= 0xF4 ? 3
                                     : 0;
    if (!n || end - p <= n)
      return skim_fail(k, p, "invalid UTF-8");
    unsigned char c1 = (unsigned char)p[1];
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
        (c == 0xF4 && c1 > 0x8F))
      return skim_fail(k, p, "invalid UTF-8");
    for (int i = 1; i <= n; i++)
      if (((unsigned char)p[i] & 0xC0) != 0x80)
        return skim_fail(k, p, "invalid UTF-8");
    p += n + 1;
  }
  return skim_fail(k, end, "premature end of input in a string");
}

static bool skim_digits(const char **p, const char *end) {
  const char *s = *p;
  while (*p < end && **p >= '0' && **p <= '9')
    (*p)++;
  return *p > s;
}

static bool skim_number(struct skim *k) {
  const char *p = k->p, *end = k->end;
  if (*p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else if (!skim_digits(&p, end))
    return skim_fail(k, k->p, "invalid number");
  if (p < end && *p == '.') {
    p++;
    if (!skim_digits(&p, end))
      return skim_fail(k, p, "invalid number");
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-'))
      p++;
    if (!skim_digits(&p, end))
      return skim_fail(k, p, "invalid number");
  }
  k->p = p;
  return true;
}

static bool skim_value(struct skim *k, int depth);

/* An object's or array's members (k->p at its opening bracket). */
static bool skim_container(struct skim *k, int depth) {
  char close = *k->p == '{' ? '}' : ']';
  bool object = close == '}';
  if (depth > SKIM_DEPTH_MAX)
    return skim_fail(k, k->p, "maximum parsing depth reached");
  k->p++;
  skim_ws(k);
  if (k->p < k->end && *k->p == close) {
    k->p++;
    return true;
  }
  for (;;) {
    if (object) {
      if (k->p >= k->end || *k->p != '"')
        return skim_fail(k, k->p, "string or '}' expected");
      if (!skim_string(k))
        return false;
      skim_ws(k);
      if (k->p >= k->end || *k->p != ':')
        return skim_fail(k, k->p, "':' expected");
      k->p++;
      skim_ws(k);
    }
    if (!skim_value(k, depth + 1))
      return false;
    skim_ws(k);
    if (k->p < k->end && *k->p == ',') {
      k->p++;
      skim_ws(k);
      continue;
    }
    if (k->p < k->end && *k->p == close) {
      k->p++;
      return true;
    }
    return skim_fail(k, k->p, object ? "'}' expected" : "']' expected");
  }
}

static bool skim_value(struct skim *k, int depth) {
  if (k->p >= k->end)
    return skim_fail(k, k->p, "premature end of input");
  switch (*k->p) {
    case '"':
      return skim_string(k);
    case '{':
    case '[':
      return skim_container(k, depth);
    case 't':
    case 'f':
    case 'n': {
      const char *w = *k->p == 't' ? "true" : *k->p == 'f' ? "false" : "null";
      size_t n = strlen(w);
      if ((size_t)(k->end - k->p) < n || memcmp(k->p, w, n))
        return skim_fail(k, k->p, "invalid token");
      k->p += n;
      return true;
    }
    default:
      if (*k->p == '-' || (*k->p >= '0' && *k->p <= '9'))
        return skim_number(k);
      return skim_fail(k, k->p, "invalid token");
  }
}

static void skim_why(const struct skim *k, const char *s, char *why, size_t whylen) {
  int line = 1;
  for (const char *q = s; q < k->err; q++)
    line += *q == '\n';
  snprintf(why, whylen, "%s, line %d", k->what, line);
}

json_t *erg_rf_json_skim(const char *s, size_t n, const char *const *keep, char *why,
                         size_t whylen) {
  struct skim k = {.p = s, .end = s + n};
  json_t *out = NULL;
  skim_ws(&k);
  if (k.p >= k.end || *k.p != '{') {
    /* Not an object: what json_loadb says of it, or that it is another value. */
    if (k.p < k.end && skim_value(&k, 0)) {
      skim_ws(&k);
      if (k.p == k.end) {
        snprintf(why, whylen, "another JSON value");
        return NULL;
      }
      skim_fail(&k, k.p, "end of file expected");
    }
    if (!k.err)
      skim_fail(&k, k.p, "'[' or '{' expected");
    skim_why(&k, s, why, whylen);
    return NULL;
  }
  if (!(out = json_object())) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  k.p++;
  skim_ws(&k);
  bool first = true;
  while (k.p < k.end && !(first && *k.p == '}')) {
    first = false;
    if (*k.p != '"') {
      skim_fail(&k, k.p, "string or '}' expected");
      break;
    }
    const char *key = k.p + 1;
    if (!skim_string(&k))
      break;
    size_t klen = (size_t)(k.p - 1 - key);
    skim_ws(&k);
    if (k.p >= k.end || *k.p != ':') {
      skim_fail(&k, k.p, "':' expected");
      break;
    }
    k.p++;
    skim_ws(&k);
    const char *v = k.p;
    if (!skim_value(&k, 1))
      break;
    for (int i = 0; keep[i]; i++) {
      if (strlen(keep[i]) != klen || memcmp(keep[i], key, klen))
        continue;
      json_error_t e;
      json_t *j = json_loadb(v, (size_t)(k.p - v), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
      if (!j) {
        snprintf(why, whylen, "%s: %s", keep[i], e.text);
        json_decref(out);
        return NULL;
      }
      if (json_object_get(out, keep[i])) {
        json_decref(j);
        skim_fail(&k, key, "duplicate object key");
        break;
      }
      json_object_set_new(out, keep[i], j);
    }
    if (k.err)
      break;
    skim_ws(&k);
    if (k.p < k.end && *k.p == ',') {
      k.p++;
      skim_ws(&k);
      if (k.p < k.end && *k.p == '}') {
        skim_fail(&k, k.p, "string expected");
        break;
      }
      continue;
    }
    if (k.p >= k.end || *k.p != '}')
      skim_fail(&k, k.p, "'}' expected");
    break;
  }
  if (!k.err && k.p < k.end && *k.p == '}') {
    k.p++;
    skim_ws(&k);
    if (k.p != k.end)
      skim_fail(&k, k.p, "end of file expected");
  } else if (!k.err) {
    skim_fail(&k, k.p, "premature end of input");
  }
  if (k.err) {
    skim_why(&k, s, why, whylen);
    json_decref(out);
    return NULL;
  }
  return out;
}
