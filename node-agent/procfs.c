// SPDX-License-Identifier: GPL-3.0-or-later
/* Parsers for /proc files. They take the file's contents, not a path, so
 * tests feed them recorded and hostile inputs directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_agent.h"

/* Up to n unsigned numbers separated by blanks from *s, as sscanf's %llu
 * reads them, but within the line and without a format to interpret (the
 * agent parses statm, diskstats and net/dev every sweep); *s is left after
 * the last one read. Returns how many were read. */
static int scan_u64s(const char **s, unsigned long long *v, int n) {
  int i = 0;
  const char *p = *s;
  for (; i < n; i++) {
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p < '0' || *p > '9')
      break;
    char *end;
    v[i] = strtoull(p, &end, 10);
    p = end;
  }
  *s = p;
  return i;
}

int erg_proc_parse_stat(const char *buf, struct erg_proc_stat *out) {
  memset(out, 0, sizeof *out);
  const char *open = strchr(buf, '(');
  /* comm may itself contain ')' and spaces: the last ')' ends it. */
  const char *close = strrchr(buf, ')');
  if (!open || !close || close < open)
    return -1;
  char *end;
  unsigned long pid = strtoul(buf, &end, 10);
  if (end == buf || pid == 0 || pid > UINT32_MAX)
    return -1;
  out->pid = (uint32_t)pid;
  size_t clen = (size_t)(close - open - 1);
  if (clen >= sizeof out->comm)
    clen = sizeof out->comm - 1;
  memcpy(out->comm, open + 1, clen);
  out->comm[clen] = '\0';
  /* Fields after comm, numbered as in proc(5): 3=state ... 14=utime,
   * 15=stime, 22=starttime. */
  const char *p = close + 1;
  int field = 2;
  while (*p && field < 22) {
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    field++;
    if (field == 3)
      out->state = *p;
    else if (field == 14)
      out->utime_ticks = strtoull(p, NULL, 10);
    else if (field == 15)
      out->stime_ticks = strtoull(p, NULL, 10);
    else if (field == 22)
      out->starttime_ticks = strtoull(p, NULL, 10);
    while (*p && *p != ' ')
      p++;
  }
  return field == 22 ? 0 : -1;
}

static int status_field(const char *buf, const char *name, const char **val) {
  size_t n = strlen(name);
  for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, name, n) == 0 && l[n] == ':') {
      *val = l + n + 1;
      return 0;
    }
  }
  return -1;
}

int erg_proc_parse_status(const char *buf, struct erg_proc_status *out) {
  memset(out, 0, sizeof *out);
  const char *v;
  if (status_field(buf, "Uid", &v) != 0)
    return -1;
  out->uid = (uint32_t)strtoul(v, NULL, 10);
  /* Kernel threads have no Rss lines: leave them at 0. */
  if (status_field(buf, "RssAnon", &v) == 0)
    out->rss_anon_bytes = strtoull(v, NULL, 10) * 1024;
  if (status_field(buf, "RssFile", &v) == 0)
    out->rss_file_bytes = strtoull(v, NULL, 10) * 1024;
  if (status_field(buf, "RssShmem", &v) == 0)
    out->rss_shmem_bytes = strtoull(v, NULL, 10) * 1024;
  return 0;
}

int erg_proc_parse_statm(const char *buf, struct erg_proc_statm *out) {
  memset(out, 0, sizeof *out);
  unsigned long long v[3]; /* size resident shared */
  if (scan_u64s(&buf, v, 3) != 3 || v[2] > v[1])
    return -1;
  out->resident_pages = v[1];
  out->shared_pages = v[2];
  return 0;
}

int erg_proc_parse_io(const char *buf, struct erg_proc_io *out) {
  memset(out, 0, sizeof *out);
  const char *v;
  if (status_field(buf, "read_bytes", &v) != 0)
    return -1;
  out->read_bytes = strtoull(v, NULL, 10);
  if (status_field(buf, "write_bytes", &v) != 0)
    return -1;
  out->write_bytes = strtoull(v, NULL, 10);
  return 0;
}

static void copy_line(const char *src, char *out, size_t outlen) {
  size_t n = strcspn(src, "\n");
  if (n >= outlen)
    n = outlen - 1;
  memcpy(out, src, n);
  out[n] = '\0';
}

int erg_proc_parse_cgroup(const char *buf, char *out, size_t outlen) {
  const char *v1 = NULL;
  for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, "0::", 3) == 0) {
      copy_line(l + 3, out, outlen);
      return 0;
    }
    /* v1: "N:cpu,cpuacct:/path" (controller list may be in any order). */
    const char *c1 = strchr(l, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    const char *nl = strchr(l, '\n');
    if (c1 && c2 && (!nl || c2 < nl) && !v1) {
      char ctrl[128];
      size_t n = (size_t)(c2 - c1 - 1);
      if (n < sizeof ctrl) {
        memcpy(ctrl, c1 + 1, n);
        ctrl[n] = '\0';
        for (char *t = strtok(ctrl, ","); t; t = strtok(NULL, ","))
          if (strcmp(t, "cpu") == 0 || strcmp(t, "cpuacct") == 0)
            v1 = c2 + 1;
      }
    }
  }
  if (!v1)
    return -1;
  copy_line(v1, out, outlen);
  return 0;
}

int erg_proc_parse_cpu_totals(const char *buf, struct erg_cpu_totals *out) {
  memset(out, 0, sizeof *out);
  unsigned long long v[10] = {0};
  if (strncmp(buf, "cpu ", 4) != 0)
    return -1;
  const char *p = buf + 4;
  if (scan_u64s(&p, v, 10) < 4)
    return -1;
  /* user nice system idle iowait irq softirq steal; guest is inside user. */
  out->busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  out->idle_ticks = v[3] + v[4];
  for (const char *l = strchr(buf, '\n'); l; l = strchr(l + 1, '\n'))
    if (strncmp(l + 1, "cpu", 3) == 0 && l[4] >= '0' && l[4] <= '9')
      out->ncpu++;
  return 0;
}

int erg_proc_parse_meminfo(const char *buf, uint64_t *used_bytes) {
  const char *v;
  if (status_field(buf, "MemTotal", &v) != 0)
    return -1;
  uint64_t total = strtoull(v, NULL, 10);
  if (status_field(buf, "MemAvailable", &v) != 0)
    return -1;
  uint64_t avail = strtoull(v, NULL, 10);
  *used_bytes = (total > avail ? total - avail : 0) * 1024;
  return 0;
}

int erg_proc_parse_netdev(const char *buf, uint64_t *rx_bytes, uint64_t *tx_bytes) {
  *rx_bytes = *tx_bytes = 0;
  int seen = 0;
  for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *colon = strchr(l, ':');
    const char *nl = strchr(l, '\n');
    if (!colon || (nl && colon > nl))
      continue;
    const char *name = l;
    while (*name == ' ')
      name++;
    if (strncmp(name, "lo:", 3) == 0)
      continue;
    unsigned long long v[9];
    const char *p = colon + 1;
    if (scan_u64s(&p, v, 9) != 9)
      continue;
    *rx_bytes += v[0];
    *tx_bytes += v[8];
    seen++;
  }
  return seen >= 0 ? 0 : -1;
}

int erg_proc_parse_diskstats(const char *buf, int (*want)(const char *dev, void *user), void *user,
                             uint64_t *read_bytes, uint64_t *write_bytes) {
  *read_bytes = *write_bytes = 0;
  int n = 0;
  for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    char dev[64];
    unsigned long long v[7], rs, ws;
    const char *p = l;
    /* major minor name reads merged sectors_read ms writes merged sectors_written */
    if (scan_u64s(&p, v, 2) != 2)
      continue;
    while (*p == ' ' || *p == '\t')
      p++;
    size_t len = strcspn(p, " \t\n");
    if (len == 0 || len >= sizeof dev)
      continue;
    memcpy(dev, p, len);
    dev[len] = '\0';
    p += len;
    if (scan_u64s(&p, v, 7) != 7)
      continue;
    rs = v[2];
    ws = v[6];
    if (want && !want(dev, user))
      continue;
    *read_bytes += rs * 512; /* diskstats sectors are always 512 bytes */
    *write_bytes += ws * 512;
    n++;
  }
  return n > 0 ? 0 : -1;
}
