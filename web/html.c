// SPDX-License-Identifier: GPL-3.0-or-later
/* HTML helpers shared by every page writer (pages.c, pages_job.c,
 * pages_model.c): the page head, data text escaped, times, the atomic
 * write of a finished page. Apart so that the page files call down into
 * it and never back into each other (issue 20: no call cycles). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "web_int.h"

const char *const web_html_head =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<meta http-equiv=\"refresh\" content=\"60\">"
    "<style>body{font-family:sans-serif;margin:1em 2em}img{max-width:100%%}"
    ".node{display:inline-block;margin:0 1em 1em 0}td,th{padding:0 .6em}"
    "td.n{text-align:right}</style>"
    "<title>%s</title></head><body>\n";

int web_page_write(const char *www, const char *name, FILE *f, char **buf, size_t *len, char *why,
                   size_t whylen) {
  char path[1200];
  int rc = fclose(f);
  snprintf(path, sizeof path, "%s/%s", www, name);
  if (rc != 0)
    snprintf(why, whylen, "cannot make %s: %s", path, strerror(errno));
  else if ((rc = erg_write_file_atomic(path, *buf, *len)) != 0)
    snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
  free(*buf);
  return rc;
}

void web_html_text(FILE *f, const char *s) {
  char *e = erg_html_escape(s);
  fputs(e ? e : "?", f);
  free(e);
}

void web_html_footer(FILE *f, int64_t now) {
  char when[32];
  web_iso_time(now, when);
  fprintf(f,
          "<p>Generated %s. The page reloads every 60 s; ergd redraws a graph once it is "
          "older than 1/360 of its range (10 s for the last hour, 4 min for the day, 28 min "
          "for the week, 2 h for the month), a job's only when its archive has new "
          "data.</p>\n</body></html>\n",
          when);
}

void web_energy_unit(double max_j, const char **unit, double *j_per_unit) {
  static const struct {
    double j;
    const char *unit;
  } u[] = {{3.6e9, "MWh"}, {3.6e6, "kWh"}, {3600, "Wh"}, {1, "J"}};
  size_t i = 0;
  while (i + 1 < sizeof u / sizeof *u && !(max_j >= u[i].j))
    i++;
  *unit = u[i].unit;
  *j_per_unit = u[i].j;
}

void web_iso_time(int64_t t, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%d %H:%M:%S UTC", &tm);
}
