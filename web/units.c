// SPDX-License-Identifier: GPL-3.0-or-later
/* Energy as people read it: the unit chosen by magnitude. */
#include <math.h>
#include <stdio.h>

#include "erg_web.h"

void erg_energy_text(double joules, char *out, size_t outlen) {
  static const struct {
    double joules;
    const char *unit;
  } units[] = {{3.6e9, "MWh"}, {3.6e6, "kWh"}, {3600, "Wh"}, {1, "J"}};
  enum { N = sizeof units / sizeof *units };
  if (!isfinite(joules)) {
    snprintf(out, outlen, "–");
    return;
  }
  size_t u = 0;
  while (u + 1 < N && fabs(joules) < units[u].joules)
    u++;
  double v = joules / units[u].joules;
  /* Three significant digits (J: whole ones up to 3599); a value that
   * rounds up to the next unit takes it (999.96 Wh is "1.00 kWh"). */
  int decimals = fabs(v) >= 99.95 ? 0 : fabs(v) >= 9.995 ? 1 : 2;
  double scale = pow(10, decimals);
  if (u > 0 && fabs(round(v * scale) / scale) * units[u].joules >= units[u - 1].joules) {
    v = joules / units[--u].joules;
    decimals = 2;
  }
  if (v == 0)
    decimals = 0;
  snprintf(out, outlen, "%.*f %s", decimals, v, units[u].unit);
}
