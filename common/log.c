// SPDX-License-Identifier: GPL-3.0-or-later
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "erg_common.h"

static const char *log_ident = "erg";
static int log_level = ERG_LOG_INFO;

void erg_log_init(const char *ident, int level) {
  if (ident)
    log_ident = ident;
  log_level = level;
}

int erg_log_level_parse(const char *s) {
  static const char *names[] = {"error", "warning", "info", "debug"};
  for (int i = 0; i < 4; i++)
    if (strcasecmp(s, names[i]) == 0)
      return i;
  if (strcasecmp(s, "warn") == 0)
    return ERG_LOG_WARN;
  return -1;
}

/* Bytes of message text per line, after escaping (the "…" included). */
#define LOG_MSG_MAX 1024

/* Copies msg into out (outlen > 4) as one safe line: control bytes, C1
 * controls and bytes that are no UTF-8 become \xNN (\n, \r, \t as such), so
 * text from agents and devices (node names, versions, labels) can neither
 * start a forged line nor garble a terminal. Cut at a character with "…"
 * when it does not fit or was cut already (cut). Returns the length. */
static size_t log_escape(const char *msg, size_t len, int cut, char *out, size_t outlen) {
  static const char ellipsis[] = "\xe2\x80\xa6";
  size_t o = 0, room = outlen - sizeof ellipsis; /* keeps space for "…" + NUL */
  for (size_t i = 0; i < len;) {
    unsigned char c = (unsigned char)msg[i];
    size_t n = erg_utf8_len(msg + i, len - i);
    char esc[16];
    size_t elen;
    if (c == '\n' || c == '\r' || c == '\t') {
      elen = (size_t)snprintf(esc, sizeof esc, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
      n = 1;
    } else if (!n || c < 0x20 || c == 0x7f) {
      elen = (size_t)snprintf(esc, sizeof esc, "\\x%02x", c);
      n = 1;
    } else if (c == 0xc2 && (unsigned char)msg[i + 1] < 0xa0) { /* C1: U+0080..U+009F */
      elen = (size_t)snprintf(esc, sizeof esc, "\\xc2\\x%02x", (unsigned char)msg[i + 1]);
    } else {
      memcpy(esc, msg + i, n);
      elen = n;
    }
    if (o + elen > room) {
      cut = 1;
      break;
    }
    memcpy(out + o, esc, elen);
    o += elen;
    i += n;
  }
  if (cut) {
    memcpy(out + o, ellipsis, sizeof ellipsis - 1);
    o += sizeof ellipsis - 1;
  }
  out[o] = '\0';
  return o;
}

void erg_log(int level, const char *fmt, ...) {
  static const char *tags[] = {"error", "warning", "info", "debug"};
  if (level > log_level)
    return;
  /* Formatted with room to spare, so a cut is seen and marked. */
  char raw[4 * LOG_MSG_MAX], msg[LOG_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  int rn = vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  if (rn < 0)
    rn = 0;
  size_t rlen = (size_t)rn < sizeof raw ? (size_t)rn : sizeof raw - 1;
  log_escape(raw, rlen, (size_t)rn >= sizeof raw, msg, sizeof msg);
  /* One write per line so concurrent threads never interleave a line. */
  char line[LOG_MSG_MAX + 200];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  int n =
      snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02dZ %s %s: %s\n", tm.tm_year + 1900,
               tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, log_ident,
               tags[level < 0   ? 0
                    : level > 3 ? 3
                                : level],
               msg);
  if (n < 0)
    return;
  if (n >= (int)sizeof line) { /* only with a very long ident: keep the newline */
    n = (int)sizeof line - 1;
    line[n - 1] = '\n';
  }
  fwrite(line, 1, (size_t)n, stderr);
}
