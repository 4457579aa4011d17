// SPDX-License-Identifier: GPL-3.0-or-later
/* Scoping the agent to a cgroup subtree: which processes belong to it, and
 * the subtree's own CPU accounting, which replaces /proc/stat as the
 * "node" busy time. One machine can so run several virtual nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

int agent_cgroup2_root(char *out, size_t len) {
  FILE *f = fopen("/proc/self/mountinfo", "r");
  char line[1024];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) {
    char mnt[512], fstype[64];
    const char *dash = strstr(line, " - ");
    if (!dash || sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
      continue;
    if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
      erg_strlcpy(out, mnt, len);
      found = 1;
    }
  }
  if (f)
    fclose(f);
  return found ? 0 : -1;
}

int agent_scope_normalize(const char *in, char *out, size_t outlen, char *why, size_t whylen) {
  size_t n = strlen(in);
  if (in[0] != '/' || n >= outlen || strstr(in, "/../") || strstr(in, "\n")) {
    snprintf(why, whylen, "'%s' is not an absolute cgroup path of < %zu bytes", in, outlen);
    return -1;
  }
  while (n > 1 && in[n - 1] == '/')
    n--;
  memcpy(out, in, n);
  out[n] = '\0';
  return 0;
}

int erg_agent_scope_set(struct erg_agent_config *cfg, const char *path, char *why, size_t whylen) {
  return agent_scope_normalize(path, cfg->scope, sizeof cfg->scope, why, whylen);
}

int agent_scope_contains(const struct erg_agent *a, const char *cgroup) {
  const char *s = a->cfg.scope;
  if (!s[0] || !strcmp(s, "/"))
    return 1;
  size_t n = strlen(s);
  return cgroup && strncmp(cgroup, s, n) == 0 && (cgroup[n] == '\0' || cgroup[n] == '/');
}

int agent_pid_cgroup(struct erg_agent *a, uint32_t pid, char *out, size_t len) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "%u/cgroup", pid);
  if (agent_read(a, path, buf, sizeof buf) != 0 || erg_proc_parse_cgroup(buf, out, len) != 0) {
    out[0] = '\0';
    return -1;
  }
  return 0;
}

static int file_exists(const char *path) {
  FILE *f = fopen(path, "r");
  if (f)
    fclose(f);
  return f != NULL;
}

/* Finds the subtree's CPU and memory accounting: cgroup v2 cpu.stat (always
 * present, even without the cpu controller), else v1 cpuacct.usage. */
int agent_scope_open(struct erg_agent *a, char *why, size_t whylen) {
  const char *s = a->cfg.scope;
  char root[256];
  if (!s[0])
    return 0;
  if (agent_cgroup2_root(root, sizeof root) == 0) {
    snprintf(a->scope_cpu, sizeof a->scope_cpu, "%s%s/cpu.stat", root, s);
    snprintf(a->scope_mem, sizeof a->scope_mem, "%s%s/memory.current", root, s);
    if (file_exists(a->scope_cpu))
      return 0;
  }
  static const char *v1[] = {"/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct",
                             "/sys/fs/cgroup/cpuacct,cpu"};
  for (size_t i = 0; i < sizeof v1 / sizeof v1[0]; i++) {
    snprintf(a->scope_cpu, sizeof a->scope_cpu, "%s%s/cpuacct.usage", v1[i], s);
    snprintf(a->scope_mem, sizeof a->scope_mem, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", s);
    if (file_exists(a->scope_cpu))
      return 0;
  }
  snprintf(why, whylen,
           "scope %s: no cpu.stat under the cgroup2 mount and no v1 cpuacct.usage for it", s);
  return -1;
}

/* Cumulative CPU ns of the subtree; 0 when the cgroup is gone. */
uint64_t agent_scope_busy_ns(const struct erg_agent *a) {
  char buf[1024];
  if (erg_read_file(a->scope_cpu, buf, sizeof buf) < 0)
    return 0;
  const char *u = strstr(buf, "usage_usec ");
  if (u)
    return strtoull(u + 11, NULL, 10) * 1000;
  return strtoull(buf, NULL, 10); /* v1 cpuacct.usage is in ns already */
}

/* The subtree's memory, or 0 when no memory controller accounts it. */
uint64_t agent_scope_mem_bytes(const struct erg_agent *a) {
  char buf[64];
  if (erg_read_file(a->scope_mem, buf, sizeof buf) < 0)
    return 0;
  return strtoull(buf, NULL, 10);
}
