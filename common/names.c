#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

uint64_t erg_hash_fnv1a(const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static int name_char_ok(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

int erg_name_is_safe(const char *s) {
  size_t n = 0;
  for (; s[n]; n++)
    if (n + 1 >= ERG_NAME_MAX || !name_char_ok((unsigned char)s[n]))
      return 0;
  return n > 0 && s[0] != '.';
}

/* Ends in "-" and 8 lowercase hex digits: the shape of the suffix that
 * erg_name_sanitize adds to a changed name. */
static int name_has_hash_suffix(const char *s, size_t n) {
  if (n < 9 || s[n - 9] != '-')
    return 0;
  for (size_t i = n - 8; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

void erg_name_sanitize(const char *in, size_t inlen, char out[ERG_NAME_MAX]) {
  /* Room for "-" + 8 hex digits of hash at the end. */
  const size_t body_max = ERG_NAME_MAX - 1 - 9;
  size_t n = 0;
  int changed = 0;
  for (size_t i = 0; i < inlen && in[i]; i++) {
    unsigned char c = (unsigned char)in[i];
    if (n >= body_max) {
      changed = 1;
      break;
    }
    /* A leading dot would make "." , ".." or hidden files. */
    if (!name_char_ok(c) || (n == 0 && c == '.')) {
      c = '_';
      changed = 1;
    }
    out[n++] = (char)c;
  }
  if (n == 0) {
    out[n++] = '_';
    changed = 1;
  }
  /* A clean name shaped like a changed one ("a_b-1234abcd") would share a
   * file with the name it imitates ("a b"): it gets a suffix of its own. */
  if (!changed && name_has_hash_suffix(out, n))
    changed = 1; /* n <= body_max: the suffix fits */
  if (changed) {
    uint64_t h = erg_hash_fnv1a(in, strnlen(in, inlen));
    n += (size_t)snprintf(out + n, ERG_NAME_MAX - n, "-%08x", (unsigned)(h & 0xffffffffu));
  }
  out[n] = '\0';
}

char *erg_html_escape(const char *in) {
  size_t len = strlen(in);
  char *out = malloc(len * 6 + 1);
  if (!out)
    return NULL;
  char *o = out;
  for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
    switch (*p) {
    case '<': memcpy(o, "&lt;", 4); o += 4; break;
    case '>': memcpy(o, "&gt;", 4); o += 4; break;
    case '&': memcpy(o, "&amp;", 5); o += 5; break;
    case '"': memcpy(o, "&quot;", 6); o += 6; break;
    case '\'': memcpy(o, "&#39;", 5); o += 5; break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        *o++ = '?';
      else
        *o++ = (char)*p;
    }
  }
  *o = '\0';
  return out;
}

char *erg_json_escape(const char *in, size_t inlen) {
  char *out = malloc(inlen * 6 + 1);
  if (!out)
    return NULL;
  char *o = out;
  for (size_t i = 0; i < inlen && in[i]; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == '"' || c == '\\') {
      *o++ = '\\';
      *o++ = (char)c;
    } else if (c < 0x20 || c == 0x7f || c >= 0x80) {
      /* Non-ASCII bytes are escaped one by one: comm is bytes, not UTF-8. */
      o += sprintf(o, "\\u%04x", c);
    } else {
      *o++ = (char)c;
    }
  }
  *o = '\0';
  return out;
}

void erg_strlcpy(char *dst, const char *src, size_t dstlen) {
  if (dstlen == 0)
    return;
  size_t n = strnlen(src, dstlen - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}
