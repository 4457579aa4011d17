/* The fit on real measurements: Kepler model-db, machine nx12 (2 × Xeon
 * E5-2667 v3, ACPI platform power, 3 s), converted here into an erg
 * journal with cycles, instructions and cache misses as per-second rates.
 * The fixture README reports a held-out MAPE of about 5–8 % for that
 * feature set. Skips (77) when ../shared is not there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg_fit.h"

#ifndef KEPLER_CSV
#define KEPLER_CSV "../shared/fixtures/power-data/kepler_nx12_e5-2667v3_acpi_platform_power_3s.csv"
#endif

/* Column index of name in the CSV header line, or -1. */
static int csv_column(const char *header, const char *name) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", header);
  int i = 0;
  for (char *save, *t = strtok_r(buf, ",\r\n", &save); t; t = strtok_r(NULL, ",\r\n", &save), i++)
    if (strcmp(t, name) == 0)
      return i;
  return -1;
}

static int convert(FILE *in, FILE *out) {
  char line[4096];
  if (!fgets(line, sizeof line, in))
    return -1;
  static const char *want[] = {"timestamp", "platform_power", "cpu_cycles", "cpu_instructions",
                               "cache_miss"};
  int col[5];
  for (int k = 0; k < 5; k++)
    if ((col[k] = csv_column(line, want[k])) < 0)
      return -1;
  fprintf(out, "# erg-journal v1 node=nx12 step_seconds=3\n"
               "time_unix_seconds,step_seconds,measured_watts,flags,cpu_cycles_per_second,"
               "cpu_instructions_per_second,cache_misses_per_second\n");
  int rows = 0;
  while (fgets(line, sizeof line, in)) {
    double v[32];
    int n = 0;
    for (char *save, *t = strtok_r(line, ",\r\n", &save); t && n < 32;
         t = strtok_r(NULL, ",\r\n", &save))
      v[n++] = strtod(t, NULL);
    if (n <= col[4])
      continue;
    /* Counts are per 3 s interval; the journal holds rates. */
    fprintf(out, "%.0f,3,%.3f,0,%.6f,%.6f,%.6f\n", v[col[0]], v[col[1]], v[col[2]] / 3,
            v[col[3]] / 3, v[col[4]] / 3);
    rows++;
  }
  return rows;
}

int main(void) {
  FILE *in = fopen(KEPLER_CSV, "r");
  if (!in) {
    printf("SKIP: %s not found (the shared fixtures are not part of the project)\n", KEPLER_CSV);
    return 77;
  }
  char path[] = "/tmp/erg-fit-kepler-XXXXXX";
  int fd = mkstemp(path);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  int rows = out ? convert(in, out) : -1;
  fclose(in);
  if (out)
    fclose(out);
  if (rows < 2000) {
    fprintf(stderr, "FAIL: converted %d rows\n", rows);
    return 1;
  }
  struct erg_dataset ds;
  struct erg_model m;
  struct erg_fit_options o;
  char why[256];
  erg_dataset_init(&ds);
  erg_fit_options_init(&o);
  o.holdout_fraction = 0.3;
  int rc = erg_journal_read(&ds, path, why, sizeof why) != 0 || erg_fit(&ds, &o, &m, why, sizeof why) != 0;
  unlink(path);
  if (rc) {
    fprintf(stderr, "FAIL: %s\n", why);
    return 1;
  }
  printf("nx12 holdout 30%%: %zu cells, idle %.1f W, MAE %.2f W, RMSE %.2f W, MAPE %.2f %%, "
         "dynamic MAPE %.2f %% (%zu cells), R2 %.3f\n",
         m.metrics.cells, m.idle_watts, m.metrics.mae_watts, m.metrics.rmse_watts,
         m.metrics.mape_total_percent, m.metrics.mape_dynamic_percent, m.metrics.cells_dynamic,
         m.metrics.r2);
  o.holdout_fraction = 0;
  o.folds = 5;
  struct erg_model cv;
  if (erg_fit(&ds, &o, &cv, why, sizeof why) != 0) {
    fprintf(stderr, "FAIL: %s\n", why);
    return 1;
  }
  printf("nx12 5 time-block folds: MAE %.2f W, MAPE %.2f %%, dynamic MAPE %.2f %%, R2 %.3f\n",
         cv.metrics.mae_watts, cv.metrics.mape_total_percent, cv.metrics.mape_dynamic_percent,
         cv.metrics.r2);
  erg_dataset_free(&ds);
  for (size_t k = 0; k < m.nfeatures; k++)
    printf("  %s %.4g W per unit\n", m.feature[k], m.coef[k]);
  for (size_t k = 0; k < m.nleft_out; k++)
    printf("  %s left out (t = %.2f)\n", m.left_out[k], m.left_out_t[k]);
  /* Instructions get a coefficient of 0 (collinear with cycles): left out. */
  if (m.nfeatures + m.nleft_out != 3 || m.nfeatures < 2 || m.metrics.cells < 600 || !(m.metrics.mape_total_percent >= 4.5) ||
      !(m.metrics.mape_total_percent <= 8.0) || !(cv.metrics.mape_total_percent <= 9.0)) {
    fprintf(stderr, "FAIL: held-out MAPE outside the README's 5-8 %% range\n");
    return 1;
  }
  printf("PASS\n");
  return 0;
}
