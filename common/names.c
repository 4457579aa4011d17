// SPDX-License-Identifier: GPL-3.0-or-later
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
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
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

size_t erg_utf8_len(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  if (n == 0)
    return 0;
  if (p[0] < 0x80)
    return 1;
  size_t len = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
               : p[0] >= 0xe0 && p[0] <= 0xef ? 3
               : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                              : 0;
  if (!len || len > n)
    return 0;
  for (size_t k = 1; k < len; k++)
    if ((p[k] & 0xc0) != 0x80)
      return 0;
  /* Overlong 3- and 4-byte forms, surrogates, beyond U+10FFFF. */
  if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
      (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
    return 0;
  return len;
}

size_t erg_utf8_fix(char *s, int controls) {
  size_t changed = 0, n = strlen(s);
  for (size_t i = 0; i < n;) {
    size_t len = erg_utf8_len(s + i, n - i);
    unsigned char c = (unsigned char)s[i];
    if (!len || (controls && (c < 0x20 || c == 0x7f))) {
      s[i++] = '?';
      changed++;
    } else {
      i += len;
    }
  }
  return changed;
}

void erg_csv_text(FILE *f, const char *s) {
  fputc('"', f);
  if (s[0] && strchr("=+-@", s[0]))
    fputc('\'', f);
  for (size_t i = 0, n = strlen(s); i < n;) {
    size_t len = erg_utf8_len(s + i, n - i);
    if (!len || (unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
      fputc('?', f);
      i++;
    } else {
      if (s[i] == '"')
        fputc('"', f);
      fwrite(s + i, 1, len, f);
      i += len;
    }
  }
  fputc('"', f);
}

char *erg_html_escape(const char *in) {
  size_t len = strlen(in);
  char *out = malloc(len * 6 + 1);
  if (!out)
    return NULL;
  char *o = out;
  for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
    switch (*p) {
      case '<':
        memcpy(o, "&lt;", 4);
        o += 4;
        break;
      case '>':
        memcpy(o, "&gt;", 4);
        o += 4;
        break;
      case '&':
        memcpy(o, "&amp;", 5);
        o += 5;
        break;
      case '"':
        memcpy(o, "&quot;", 6);
        o += 6;
        break;
      case '\'':
        memcpy(o, "&#39;", 5);
        o += 5;
        break;
      default:
        if (*p < 0x20 || *p == 0x7f) {
          *o++ = '?';
        } else {
          /* Pages say charset=utf-8: a broken sequence becomes '?'. */
          size_t n = erg_utf8_len((const char *)p, 4);
          if (!n) {
            *o++ = '?';
            break;
          }
          memcpy(o, p, n);
          o += n;
          p += n - 1;
        }
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
