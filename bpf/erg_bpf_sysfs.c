// SPDX-License-Identifier: GPL-3.0-or-later
/* sysfs readers for the BPF loader: core capacities and current frequencies.
 * Pure file parsing, so tests can point them at a fake tree. */
#include "erg_bpf.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"

/* "cpu12" -> 12; anything else (cpufreq, cpuidle, cpu1x) -> -1. */
static int cpu_dir_index(const char *name) {
  const char *p = name + 3;
  long v;

  if (strncmp(name, "cpu", 3) != 0 || !isdigit((unsigned char)*p))
    return -1;
  for (const char *q = p; *q; q++)
    if (!isdigit((unsigned char)*q))
      return -1;
  v = strtol(p, NULL, 10);
  return v > INT_MAX ? -1 : (int)v;
}

static int file_read_u32(const char *path, uint32_t *out) {
  char buf[64], *end;
  unsigned long v;

  if (erg_read_file(path, buf, sizeof(buf)) <= 0)
    return -1;
  v = strtoul(buf, &end, 10);
  if (end == buf || v > UINT32_MAX)
    return -1;
  *out = (uint32_t)v;
  return 0;
}

/* One "N" or "N-M" of a CPU list; returns the rest of s, NULL if malformed. */
static const char *cpu_range(const char *s, long *lo, long *hi) {
  char *end;

  if (!isdigit((unsigned char)*s))
    return NULL;
  *lo = *hi = strtol(s, &end, 10);
  if (*end == '-') {
    if (!isdigit((unsigned char)end[1]))
      return NULL;
    *hi = strtol(end + 1, &end, 10);
  }
  return *hi < *lo || *hi > INT_MAX ? NULL : end;
}

int erg_bpf_parse_cpu_list(const char *s, bool *mask, int max) {
  int n = 0;

  memset(mask, 0, sizeof(*mask) * (size_t)max);
  while (*s && *s != '\n') {
    long lo, hi;

    s = cpu_range(s, &lo, &hi);
    if (!s || (*s && *s != ',' && *s != '\n'))
      return -1;
    for (long c = lo; c <= hi && c < max; c++)
      if (!mask[c]) {
        mask[c] = true;
        n++;
      }
    if (*s == ',' && (*++s == '\0' || *s == '\n'))
      return -1;
  }
  return n;
}

int erg_bpf_read_online(const char *root, bool *mask, int max) {
  char path[PATH_MAX], buf[4096];

  snprintf(path, sizeof(path), "%s/online", root);
  if (erg_read_file(path, buf, sizeof(buf)) < 0) {
    for (int c = 0; c < max; c++)
      mask[c] = true;
    return max;
  }
  return erg_bpf_parse_cpu_list(buf, mask, max);
}

/* Reads root/cpuN/<rel> for every online cpuN < max (an offline CPU's
 * files are stale or absent); returns highest N + 1 read. */
static int sysfs_read_per_cpu(const char *root, const char *rel, uint32_t *out, int max) {
  char path[PATH_MAX];
  struct dirent *de;
  bool *online;
  int n = 0;
  DIR *d;

  memset(out, 0, sizeof(*out) * (size_t)max);
  online = calloc((size_t)max, sizeof(*online));
  if (!online || erg_bpf_read_online(root, online, max) < 0) {
    free(online);
    return -1;
  }
  d = opendir(root);
  if (!d) {
    free(online);
    return -1;
  }
  while ((de = readdir(d)) != NULL) {
    int cpu = cpu_dir_index(de->d_name);
    if (cpu < 0 || cpu >= max || !online[cpu])
      continue;
    if (snprintf(path, sizeof(path), "%s/%s/%s", root, de->d_name, rel) >= (int)sizeof(path))
      continue;
    if (file_read_u32(path, &out[cpu]) == 0 && cpu + 1 > n)
      n = cpu + 1;
  }
  closedir(d);
  free(online);
  return n;
}

int erg_bpf_read_capacities(const char *root, uint32_t *out, int max) {
  return sysfs_read_per_cpu(root, "cpu_capacity", out, max);
}

int erg_bpf_read_frequencies(const char *root, uint32_t *out, int max) {
  return sysfs_read_per_cpu(root, "cpufreq/scaling_cur_freq", out, max);
}

int erg_bpf_capacity_group(const uint32_t *caps, int n, uint32_t *classes, int maxc) {
  int nc = 0;

  for (int i = 0; i < n; i++) {
    int j = 0;
    if (caps[i] == 0)
      continue;
    while (j < nc && classes[j] < caps[i])
      j++;
    if (j < nc && classes[j] == caps[i])
      continue;
    if (nc == maxc)
      return -1;
    memmove(&classes[j + 1], &classes[j], sizeof(*classes) * (size_t)(nc - j));
    classes[j] = caps[i];
    nc++;
  }
  return nc;
}

const char *erg_bpf_feature_name(unsigned bit) {
  switch (bit) {
    case ERG_BPF_F_CPU_TIME:
      return "cpu_time";
    case ERG_BPF_F_FREQ:
      return "freq";
    case ERG_BPF_F_CAPACITY:
      return "capacity";
    case ERG_BPF_F_WAKEUPS:
      return "wakeups";
    case ERG_BPF_F_MIGRATIONS:
      return "migrations";
    case ERG_BPF_F_BLKIO:
      return "blkio";
    case ERG_BPF_F_CYCLES:
      return "cycles";
    case ERG_BPF_F_INSTRUCTIONS:
      return "instructions";
    case ERG_BPF_F_LLC_MISSES:
      return "llc_misses";
    default:
      return NULL;
  }
}
