// SPDX-License-Identifier: GPL-3.0-or-later
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg_common.h"
#include "erg_pdusim.h"

void erg_pdusim_model_defaults(struct erg_pdusim_model *m) {
  m->idle_watts = 60.0;
  m->slope_watts = 140.0;
  m->exponent = 1.0;
  m->noise_watts = 0.0;
  m->quantum_watts = 0.0;
  m->update_seconds = 1.0;
  m->lag_seconds = 0.0;
}

double erg_pdusim_model_raw_watts(const struct erg_pdusim_model *m, double util,
                                  double disk_bytes_per_second, double z) {
  if (util < 0)
    util = 0;
  if (util > 1)
    util = 1;
  double w = m->ncurve ? erg_pdusim_curve_watts(m, util)
                       : m->idle_watts + m->slope_watts * pow(util, m->exponent);
  if (disk_bytes_per_second > 0)
    w += m->disk_watts_per_mbps * disk_bytes_per_second / 1e6;
  return w + m->noise_watts * z;
}

double erg_pdusim_quantise(double w, double quantum_watts) {
  if (quantum_watts > 0)
    w = quantum_watts * floor(w / quantum_watts + 0.5);
  return w < 0 ? 0 : w;
}

double erg_pdusim_model_watts(const struct erg_pdusim_model *m, double util,
                              double disk_bytes_per_second, double z) {
  return erg_pdusim_quantise(erg_pdusim_model_raw_watts(m, util, disk_bytes_per_second, z),
                             m->quantum_watts);
}

/* Whole machine: busy and total jiffies from /proc/stat, in microseconds. */
static int load_read_machine(uint64_t *busy_us, uint64_t *total_us) {
  char buf[512];
  if (erg_read_file("/proc/stat", buf, sizeof buf) < 0)
    return -1;
  unsigned long long v[8] = {0};
  if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
             &v[5], &v[6], &v[7]) < 4)
    return -1;
  uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  uint64_t total = busy + v[3] + v[4];
  *busy_us = busy * 10000ULL; /* USER_HZ is 100 on Linux */
  *total_us = total * 10000ULL;
  return 0;
}

static int load_read_cgroup(const char *cg, uint64_t *busy_us) {
  char path[512], buf[1024];
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.stat", cg);
  if (erg_read_file(path, buf, sizeof buf) < 0)
    return -1;
  unsigned long long u;
  if (sscanf(buf, "usage_usec %llu", &u) != 1)
    return -1;
  *busy_us = u;
  return 0;
}

double erg_pdusim_load_sample(struct erg_pdusim_load *l, unsigned ncpu) {
  uint64_t busy = 0, total = 0, now = erg_time_monotonic_ns();
  if (l->cgroup[0]) {
    if (load_read_cgroup(l->cgroup, &busy) != 0)
      return 0;
    /* A cgroup's capacity is wall time x CPUs. */
    total = l->prev_total_us + (now - l->prev_t_ns) / 1000 * (ncpu ? ncpu : 1);
  } else if (load_read_machine(&busy, &total) != 0) {
    return 0;
  }
  double util = 0;
  if (l->primed && total > l->prev_total_us && busy >= l->prev_busy_us)
    util = (double)(busy - l->prev_busy_us) / (double)(total - l->prev_total_us);
  l->prev_busy_us = busy;
  l->prev_total_us = total;
  l->prev_t_ns = now;
  l->primed = 1;
  return util < 0 ? 0 : util > 1 ? 1 : util;
}
