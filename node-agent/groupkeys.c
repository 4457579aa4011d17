// SPDX-License-Identifier: GPL-3.0-or-later
/* Grouping keys from cgroup paths. Patterns (cgroup v1 and v2):
 *   Slurm      .../job_<id>/...                       -> job "<id>"
 *   systemd    .../<name>.service or .scope           -> unit (innermost)
 *   docker     docker-<64hex>.scope, /docker/<64hex>
 *   containerd cri-containerd-<64hex>.scope
 *   podman     libpod-<64hex>.scope
 *   k8s        kubepods-...-pod<uid>.slice/<runtime>-<64hex>.scope
 * A process has one path per hierarchy (/proc/PID/cgroup); on hybrid hosts
 * Slurm's job lives in the v1 hierarchies and systemd's unit in the v2 one,
 * so erg_group_keys_from_proc looks at all of them. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "erg_agent.h"

static int is_hex_run(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isxdigit((unsigned char)s[i]))
      return 0;
  return 1;
}

/* Finds a 64-hex-digit container id inside one path component. */
static int component_container(const char *c, size_t n, char *out, size_t outlen) {
  for (size_t i = 0; i + 64 <= n; i++) {
    if ((i == 0 || !isxdigit((unsigned char)c[i - 1])) && is_hex_run(c + i, 64) &&
        (i + 64 == n || !isxdigit((unsigned char)c[i + 64]))) {
      size_t m = outlen - 1 < 64 ? outlen - 1 : 64;
      memcpy(out, c + i, m);
      out[m] = '\0';
      return 1;
    }
  }
  return 0;
}

static int ends_with(const char *c, size_t n, const char *suf) {
  size_t m = strlen(suf);
  return n >= m && memcmp(c + n - m, suf, m) == 0;
}

void erg_group_keys_derive(const char *cgroup, struct erg_group_keys *out) {
  memset(out, 0, sizeof *out);
  const char *p = cgroup;
  while (p && *p) {
    while (*p == '/')
      p++;
    size_t n = strcspn(p, "/\n");
    if (n == 0)
      break;
    if (n > 4 && memcmp(p, "job_", 4) == 0 && isdigit((unsigned char)p[4])) {
      size_t d = 4;
      while (d < n && isdigit((unsigned char)p[d]))
        d++;
      if (d == n && d - 4 < sizeof out->job) {
        memcpy(out->job, p + 4, d - 4);
        out->job[d - 4] = '\0';
      }
    }
    if ((ends_with(p, n, ".service") || ends_with(p, n, ".scope")) && n < sizeof out->unit) {
      memcpy(out->unit, p, n);
      out->unit[n] = '\0';
    }
    component_container(p, n, out->container, sizeof out->container);
    p += n;
  }
}

static void keys_merge(struct erg_group_keys *into, const struct erg_group_keys *k) {
  if (!into->job[0])
    memcpy(into->job, k->job, sizeof into->job);
  if (!into->unit[0])
    memcpy(into->unit, k->unit, sizeof into->unit);
  if (!into->container[0])
    memcpy(into->container, k->container, sizeof into->container);
}

/* The path of line l ("N:controllers:/path"), copied into out; 1 if the
 * line is the v2 one ("0::"). Returns -1 for a malformed line. */
static int cgroup_line_path(const char *l, char *out, size_t outlen) {
  const char *c1 = strchr(l, ':'), *nl = strchr(l, '\n');
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c2 || (nl && c2 > nl))
    return -1;
  size_t n = nl ? (size_t)(nl - c2 - 1) : strlen(c2 + 1);
  if (n >= outlen)
    n = outlen - 1;
  memcpy(out, c2 + 1, n);
  out[n] = '\0';
  return strncmp(l, "0::", 3) == 0;
}

void erg_group_keys_from_proc(const char *proc_cgroup, struct erg_group_keys *out) {
  char path[1024];
  struct erg_group_keys k;
  memset(out, 0, sizeof *out);
  /* The v2 path first: it is the one the agent reports and scopes by. A key
   * it lacks comes from the first v1 hierarchy that has one. */
  for (int v2 = 1; v2 >= 0; v2--)
    for (const char *l = proc_cgroup; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
      if (cgroup_line_path(l, path, sizeof path) == v2) {
        erg_group_keys_derive(path, &k);
        keys_merge(out, &k);
      }
}
