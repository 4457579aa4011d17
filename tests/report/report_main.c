// SPDX-License-Identifier: GPL-3.0-or-later
/* `erg report` / `erg graph` / `erg jobs` for the tests (cli/'s functions):
 * report_main report ARGS... or report_main graph ARGS...; and
 * report_main key-energy DIR NODE|- KIND KEY FROM TO [CARBON_CSV [PUE]]:
 * erg_report_key_energy, the entry point other commands (erg jobs) call,
 * printing "energy facility co2 known step". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_cli.h"
#include "erg_web.h"

static int key_energy(int argc, char **argv) {
  if (argc < 8)
    return 1;
  struct erg_series carbon = {0};
  char why[600];
  struct erg_energy_factors f = {.co2_g_per_kwh = NAN, .pue = argc > 9 ? atof(argv[9]) : 1};
  if (argc > 8 && strcmp(argv[8], "-")) {
    if (erg_series_load(argv[8], 0, &carbon, why, sizeof why) != 0) {
      fprintf(stderr, "%s\n", why);
      return 2;
    }
    f.carbon = &carbon;
  }
  struct erg_key_energy e;
  int rc = erg_report_key_energy(argv[2], strcmp(argv[3], "-") ? argv[3] : NULL, argv[4], argv[5],
                                 strtoll(argv[6], NULL, 10), strtoll(argv[7], NULL, 10),
                                 argc > 8 ? &f : NULL, &e, why, sizeof why);
  erg_series_free(&carbon);
  if (rc != 0) {
    fprintf(stderr, "%s\n", why);
    return 2;
  }
  printf("%.6f %.6f %.6f %.0f %lu\n", e.energy_joules, e.facility_energy_joules, e.co2_grams,
         e.known_seconds, e.step_seconds);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "report"))
    return erg_report_cli(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "graph"))
    return erg_graph_cli(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "jobs"))
    return erg_jobs_cli(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "key-energy"))
    return key_energy(argc, argv);
  fprintf(stderr, "usage: report_main report|graph|jobs|key-energy ARGS...\n");
  return 1;
}
