// SPDX-License-Identifier: GPL-3.0-or-later
/* The node's totals of one sweep: CPU, memory, network and disk from
 * proc_root, or the scope's own accounting when scoped. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "agent_int.h"

/* The node files read every sweep stay open and are read again from
 * offset 0, where procfs makes them anew: an open and a close less per
 * file per sweep (40 % of the totals' cost). Only files on procfs: a
 * test's fake tree may replace its files. A failed read closes the file
 * and reads it by path, and the next sweep opens it again. */
static long kept_pread(int fd, char *buf, size_t len) {
  size_t off = 0;
  while (off + 1 < len) {
    ssize_t n = pread(fd, buf + off, len - 1 - off, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    off += (size_t)n;
  }
  buf[off] = '\0';
  return (long)off;
}

static int kept_read(struct erg_agent *a, int i, const char *rel, char *buf, size_t len) {
  int *k = &a->kept_fd[i];
  if (*k == 0) {
    char path[512];
    struct statfs fs;
    snprintf(path, sizeof path, "%s/%s", a->cfg.proc_root, rel);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return -1;
    if (fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
      *k = fd + 1;
    } else {
      close(fd);
      *k = -1;
    }
  }
  if (*k > 0) {
    if (kept_pread(*k - 1, buf, len) >= 0)
      return 0;
    close(*k - 1);
    *k = 0;
  }
  return agent_read(a, rel, buf, len);
}

void agent_kept_close(struct erg_agent *a) {
  for (int i = 0; i < AGENT_KEPT_N; i++)
    if (a->kept_fd[i] > 0)
      close(a->kept_fd[i] - 1);
}

/* Whole physical disks only: partitions, device-mapper and md devices
 * would count the same bytes twice, loop and ram devices not at all. The
 * answer per name is kept (it was one access() per device per sweep) and
 * asked again after AGENT_DISKS_TTL_NS, for devices replaced under the
 * same name; a name not seen before is asked at once. */
static int disk_is_physical(const char *dev, void *user) {
  struct agent_disks *d = user;
  for (size_t i = 0; i < d->n; i++)
    if (!strcmp(d->dev[i].name, dev))
      return d->dev[i].physical;
  char path[128];
  snprintf(path, sizeof path, "/sys/block/%s/device", dev);
  int physical = access(path, F_OK) == 0;
  if (d->n < AGENT_DISKS_MAX && strlen(dev) < sizeof d->dev[0].name) {
    strcpy(d->dev[d->n].name, dev);
    d->dev[d->n++].physical = physical;
  }
  return physical;
}

static void agent_read_disk(struct erg_agent *a, uint64_t *r, uint64_t *w) {
  char buf[16384];
  *r = *w = 0;
  uint64_t now = erg_time_monotonic_ns();
  if (now - a->disks.checked_ns > AGENT_DISKS_TTL_NS) {
    a->disks.n = 0;
    a->disks.checked_ns = now;
  }
  if (kept_read(a, AGENT_KEPT_DISKSTATS, "diskstats", buf, sizeof buf) == 0)
    erg_proc_parse_diskstats(buf, disk_is_physical, &a->disks, r, w);
}

static void agent_read_totals(struct erg_agent *a, struct erg_cpu_totals *cpu, uint64_t *mem,
                              uint64_t *rx, uint64_t *tx) {
  char buf[16384];
  memset(cpu, 0, sizeof *cpu);
  if (kept_read(a, AGENT_KEPT_STAT, "stat", buf, sizeof buf) == 0)
    erg_proc_parse_cpu_totals(buf, cpu);
  *mem = 0;
  if (kept_read(a, AGENT_KEPT_MEMINFO, "meminfo", buf, sizeof buf) == 0)
    erg_proc_parse_meminfo(buf, mem);
  *rx = *tx = 0;
  if (kept_read(a, AGENT_KEPT_NETDEV, "net/dev", buf, sizeof buf) == 0)
    erg_proc_parse_netdev(buf, rx, tx);
  agent_read_disk(a, &a->disk_cur_r, &a->disk_cur_w);
  if (a->cfg.scope[0]) {
    cpu->scope_busy_ns = agent_scope_busy_ns(a);
    uint64_t m = agent_scope_mem_bytes(a);
    *mem = m ? m : *mem;
  }
}

uint64_t agent_busy_counter_ns(const struct erg_agent *a, const struct erg_cpu_totals *cpu) {
  return a->cfg.scope[0] ? cpu->scope_busy_ns : agent_ticks_to_ns(a, cpu->busy_ticks);
}

/* The busy counter alone: the scope's accounting file, else /proc/stat's
 * first line (tick-sampled: 1 / USER_HZ per CPU, docs/agent.md). */
void erg_agent_subsample(struct erg_agent *a) {
  if (a->nsub >= AGENT_MAX_SLICES)
    return;
  struct erg_cpu_totals cpu;
  memset(&cpu, 0, sizeof cpu);
  if (a->cfg.scope[0])
    cpu.scope_busy_ns = agent_scope_busy_ns(a);
  else {
    char buf[16384];
    if (kept_read(a, AGENT_KEPT_STAT, "stat", buf, sizeof buf) != 0 ||
        erg_proc_parse_cpu_totals(buf, &cpu) != 0) {
      a->sub_bad = 1;
      return;
    }
  }
  a->sub_mono[a->nsub] = erg_time_monotonic_ns();
  a->sub_busy[a->nsub++] = agent_busy_counter_ns(a, &cpu);
}

/* Called by the sweep (/proc path) or at the eBPF drain's cut, which is
 * why it lives below both paths. */
void agent_sweep_totals(struct erg_agent *a) {
  agent_read_totals(a, &a->tot.cpu, &a->tot.mem, &a->tot.rx, &a->tot.tx);
  a->tot.have = 1;
}
