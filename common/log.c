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

void erg_log(int level, const char *fmt, ...) {
  static const char *tags[] = {"error", "warning", "info", "debug"};
  if (level > log_level)
    return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One write per line so concurrent threads never interleave a line. */
  char line[1200];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02dZ %s %s: %s\n",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                   tm.tm_sec, log_ident, tags[level < 0 ? 0 : level > 3 ? 3 : level], msg);
  if (n > (int)sizeof line)
    n = sizeof line;
  fwrite(line, 1, (size_t)n, stderr);
}
