// SPDX-License-Identifier: GPL-3.0-or-later
/* Times of --from/--to (erg report, erg jobs) and of factor series
 * (carbon.c): "now", -N{s,m,h,d,w}, unix seconds, ISO 8601 UTC. Calls
 * nothing else of the library, so every file can use it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg_web.h"

static int report_time_relative(const char *s, int64_t now, int64_t *out) {
  char *end;
  errno = 0;
  long long n = strtoll(s + 1, &end, 10);
  if (errno || end == s + 1 || n < 0 || !*end || end[1] != '\0')
    return -1;
  long long mult = *end == 'd'   ? 86400
                   : *end == 'h' ? 3600
                   : *end == 'm' ? 60
                   : *end == 's' ? 1
                   : *end == 'w' ? 604800
                                 : 0;
  if (!mult || n > 100LL * 366 * 86400 / mult)
    return -1;
  *out = now - n * mult;
  return 0;
}

/* ISO date or date-time in UTC: 2026-11-01, 2026-11-01T12:00[:00][Z]. */
static int report_time_iso(const char *s, int64_t *out) {
  struct tm tm = {0};
  int consumed = 0, y, mo, d, h = 0, mi = 0, sec = 0;
  if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &consumed) != 3 || consumed != 10)
    return -1;
  const char *p = s + 10;
  if (*p == 'T' || *p == ' ') {
    int n2 = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &n2) != 2 || n2 != 5)
      return -1;
    p += 6;
    if (*p == ':' && (sscanf(p + 1, "%2d%n", &sec, &n2) != 1 || n2 != 2))
      return -1;
    p += *p == ':' ? 3 : 0;
  }
  p += *p == 'Z';
  if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
    return -1;
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
  tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = sec;
  time_t t = timegm(&tm);
  if (t == (time_t)-1 || tm.tm_mday != d) /* timegm normalised e.g. Feb 31 */
    return -1;
  *out = (int64_t)t;
  return 0;
}

int erg_report_parse_time(const char *s, int64_t now, int64_t *out) {
  if (!s || !*s)
    return -1;
  if (!strcmp(s, "now")) {
    *out = now;
    return 0;
  }
  if (s[0] == '-')
    return report_time_relative(s, now, out);
  size_t digits = strspn(s, "0123456789");
  if (digits == strlen(s) && digits <= 12) {
    *out = strtoll(s, NULL, 10);
    return 0;
  }
  return report_time_iso(s, out);
}
