// SPDX-License-Identifier: GPL-3.0-or-later
/* Reading archives back with the real rrdtool command, for the store tests. */
#ifndef ERG_STORE_TEST_H
#define ERG_STORE_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `rrdtool fetch` AVERAGE value of ds for the step-5 row ending at t; NAN
 * when unknown or absent. With daemon, fetch goes through rrdcached (which
 * flushes the file first). */
static inline double rrdtool_fetch(const char *path, const char *ds, int64_t t,
                                   const char *daemon) {
  char cmd[2048], line[1024], names[16][32];
  snprintf(cmd, sizeof cmd, "rrdtool fetch %s%s%s '%s' AVERAGE -r 5 -s %lld -e %lld",
           daemon ? "--daemon '" : "", daemon ? daemon : "", daemon ? "'" : "", path,
           (long long)(t - 5), (long long)t);
  FILE *p = popen(cmd, "r");
  if (!p)
    return NAN;
  int nn = 0, col = -1;
  double v = NAN;
  if (fgets(line, sizeof line, p))
    for (char *tok = strtok(line, " \n"); tok && nn < 16; tok = strtok(NULL, " \n")) {
      snprintf(names[nn], sizeof names[nn], "%s", tok);
      nn++;
    }
  for (int i = 0; i < nn; i++)
    if (!strcmp(names[i], ds))
      col = i;
  while (col >= 0 && fgets(line, sizeof line, p)) {
    char *colon = strchr(line, ':');
    if (!colon || strtoll(line, NULL, 10) != t)
      continue;
    char *s = colon + 1;
    for (int i = 0; i <= col; i++)
      v = strtod(s, &s);
  }
  pclose(p);
  return v;
}

/* Value of one `rrdtool info` key (static buffer), or NULL. */
static inline const char *rrdtool_info(const char *path, const char *key) {
  static char val[256];
  char cmd[2048], line[1024];
  snprintf(cmd, sizeof cmd, "rrdtool info '%s'", path);
  FILE *p = popen(cmd, "r");
  if (!p)
    return NULL;
  size_t kl = strlen(key);
  const char *found = NULL;
  while (fgets(line, sizeof line, p))
    if (!found && !strncmp(line, key, kl) && !strncmp(line + kl, " = ", 3)) {
      line[strcspn(line, "\n")] = '\0';
      erg_strlcpy(val, line + kl + 3, sizeof val);
      found = val;
    }
  pclose(p);
  return found;
}

#endif
