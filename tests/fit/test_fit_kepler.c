/* The fit on real measurements: Kepler model-db, machine nx12 (2 × Xeon
 * E5-2667 v3, ACPI platform power, 3 s), converted here into an erg
 * journal with cycles, instructions and cache misses as per-second rates.
 * The fixture README reports a held-out MAPE of about 5–8 % for that
 * feature set. Skips (77) when ../shared is not there.
 * The fixture has no CPU time of known scale, so that fit has no
 * utilisation curve. A second journal adds one for comparison (printed,
 * docs/model.md "Utilisation curve"): bpf_cpu_time_us read as
 * milliseconds of CPU per second (its levels, ~4,300, 8,100, 14,600,
 * 23,000, 28,800, follow stress-ng's 4 … 32 instances at ~1,000 each)
 * and ncpu 32 (2 × 8 cores, 2 threads each). */
#include <math.h>
#include <stdbool.h>
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

/* with_cpu: also CPU time (bpf_cpu_time_us as ms per second) and ncpu. */
static int convert(FILE *in, FILE *out, bool with_cpu) {
  char line[4096];
  if (!fgets(line, sizeof line, in))
    return -1;
  static const char *want[] = {"timestamp", "platform_power", "cpu_cycles", "cpu_instructions",
                               "cache_miss", "bpf_cpu_time_us"};
  int col[6];
  for (int k = 0; k < 6; k++)
    if ((col[k] = csv_column(line, want[k])) < 0)
      return -1;
  fprintf(out, "# erg-journal v1 node=nx12 step_seconds=3\n"
               "time_unix_seconds,step_seconds,measured_watts,flags,cpu_cycles_per_second,"
               "cpu_instructions_per_second,cache_misses_per_second%s\n",
          with_cpu ? ",cpu_seconds_per_second,ncpu" : "");
  int rows = 0;
  while (fgets(line, sizeof line, in)) {
    double v[32];
    int n = 0;
    for (char *save, *t = strtok_r(line, ",\r\n", &save); t && n < 32;
         t = strtok_r(NULL, ",\r\n", &save))
      v[n++] = strtod(t, NULL);
    if (n <= col[4] || n <= col[5])
      continue;
    /* Counts are per 3 s interval; the journal holds rates. */
    fprintf(out, "%.0f,3,%.3f,0,%.6f,%.6f,%.6f", v[col[0]], v[col[1]], v[col[2]] / 3,
            v[col[3]] / 3, v[col[4]] / 3);
    if (with_cpu)
      fprintf(out, ",%.6f,32", v[col[5]] / 1000);
    fputc('\n', out);
    rows++;
  }
  return rows;
}

/* The fixture as an erg journal (a temp file, read back): 0 or -1. */
static int load(FILE *in, bool with_cpu, struct erg_dataset *ds, char *why, size_t whylen) {
  char path[] = "/tmp/erg-fit-kepler-XXXXXX";
  int fd = mkstemp(path);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  rewind(in);
  int rows = out ? convert(in, out, with_cpu) : -1;
  if (out)
    fclose(out);
  erg_dataset_init(ds);
  int rc = rows < 2000 ? -1 : erg_journal_read(ds, path, why, whylen);
  if (rows < 2000)
    snprintf(why, whylen, "converted %d rows", rows);
  unlink(path);
  return rc;
}

static void print_fit(const char *what, const struct erg_model *m) {
  printf("nx12 %s, holdout 30%%: %zu cells, idle %.1f W, MAE %.2f W, RMSE %.2f W, MAPE %.2f %%, "
         "dynamic MAPE %.2f %% (%zu cells), R2 %.3f\n",
         what, m->metrics.cells, m->idle_watts, m->metrics.mae_watts, m->metrics.rmse_watts,
         m->metrics.mape_total_percent, m->metrics.mape_dynamic_percent,
         m->metrics.cells_dynamic, m->metrics.r2);
}

/* For comparison only: the counters with CPU time and the utilisation
 * curve, and CPU time with the curve alone (counters NaN: not used). */
static int fit_with_cpu(FILE *in, const struct erg_fit_options *o) {
  struct erg_dataset ds;
  struct erg_model m;
  char why[256];
  if (load(in, true, &ds, why, sizeof why) != 0 ||
      erg_dataset_derive(&ds, 0, why, sizeof why) != ERG_NDERIVED ||
      erg_fit(&ds, o, &m, why, sizeof why) != 0) {
    fprintf(stderr, "FAIL: with CPU time: %s\n", why);
    erg_dataset_free(&ds);
    return -1;
  }
  print_fit("counters, CPU time and curve", &m);
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < ds.nrows; i++)
      ds.x[k][i] = NAN;
  int rc = erg_fit(&ds, o, &m, why, sizeof why);
  if (rc == 0)
    print_fit("CPU time and curve alone", &m);
  else
    fprintf(stderr, "FAIL: CPU time alone: %s\n", why);
  erg_dataset_free(&ds);
  return rc;
}

int main(void) {
  FILE *in = fopen(KEPLER_CSV, "r");
  if (!in) {
    printf("SKIP: %s not found (the shared fixtures are not part of the project)\n", KEPLER_CSV);
    return 77;
  }
  struct erg_dataset ds;
  struct erg_model m;
  struct erg_fit_options o;
  char why[256];
  erg_fit_options_init(&o);
  o.holdout_fraction = 0.3;
  if (load(in, false, &ds, why, sizeof why) != 0 || erg_fit(&ds, &o, &m, why, sizeof why) != 0) {
    fprintf(stderr, "FAIL: %s\n", why);
    return 1;
  }
  print_fit("counters", &m);
  if (fit_with_cpu(in, &o) != 0)
    return 1;
  fclose(in);
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
