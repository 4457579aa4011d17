// SPDX-License-Identifier: GPL-3.0-or-later
/* Block I/O of a cgroup for the simulator's disk cost (--disk-watts-per-mbps).
 * cgroup2's io.stat (rbytes + wbytes over devices) when the group has it;
 * else, on hosts whose io controller is bound to cgroup v1 (then io.stat
 * is missing from the cgroup2 groups), the storage-layer bytes of the
 * group's processes from /proc/PID/io (read_bytes + write_bytes, which
 * count direct I/O). A process that leaves keeps its last counted bytes
 * in the total, so the counter does not fall when a writer exits. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg_common.h"
#include "erg_pdusim.h"

/* Σ rbytes + wbytes of io.stat; -1 when the group has no io.stat. */
static int io_read_stat(const char *dir, uint64_t *bytes) {
  char path[600];
  snprintf(path, sizeof path, "%s/io.stat", dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char tok[128];
  uint64_t sum = 0, v;
  while (fscanf(f, "%127s", tok) == 1)
    if (sscanf(tok, "rbytes=%" SCNu64, &v) == 1 || sscanf(tok, "wbytes=%" SCNu64, &v) == 1)
      sum += v;
  fclose(f);
  *bytes = sum;
  return 0;
}

static uint64_t io_pid_bytes(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/io", pid);
  if (erg_read_file(path, buf, sizeof buf) < 0)
    return 0;
  uint64_t r = 0, w = 0;
  const char *p = strstr(buf, "\nread_bytes:"), *q = strstr(buf, "\nwrite_bytes:");
  if (p)
    sscanf(p, "\nread_bytes: %" SCNu64, &r);
  if (q)
    sscanf(q, "\nwrite_bytes: %" SCNu64, &w);
  return r + w;
}

/* Records pid's bytes in the table (seen in this pass). */
static void io_note_pid(struct erg_pdusim_io *io, long pid, unsigned pass) {
  uint64_t b = io_pid_bytes(pid);
  for (int i = 0; i < io->npids; i++)
    if (io->pid[i] == pid) {
      io->bytes[i] = b >= io->bytes[i] ? b : io->bytes[i];
      io->pass[i] = pass;
      return;
    }
  if (io->npids < ERG_PDUSIM_IO_PIDS) {
    io->pid[io->npids] = pid;
    io->bytes[io->npids] = b;
    io->pass[io->npids++] = pass;
  }
}

/* Every process of dir and of its child groups. */
static void io_walk(struct erg_pdusim_io *io, const char *dir, unsigned pass, int depth) {
  char path[600];
  if (snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= (int)sizeof path)
    return; /* deeper than any cgroup path: not a group we can read */
  FILE *f = fopen(path, "r");
  long pid;
  while (f && fscanf(f, "%ld", &pid) == 1)
    io_note_pid(io, pid, pass);
  if (f)
    fclose(f);
  DIR *d = depth < 8 ? opendir(dir) : NULL;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
      io_walk(io, path, pass, depth + 1);
  if (d)
    closedir(d);
}

uint64_t erg_pdusim_io_bytes(struct erg_pdusim_io *io, const char *cgroup) {
  char dir[512];
  uint64_t total;
  snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", cgroup);
  if (io_read_stat(dir, &total) == 0)
    return total;
  unsigned pass = ++io->passes;
  io_walk(io, dir, pass, 0);
  total = io->gone_bytes;
  /* Processes gone since the last pass keep their bytes in gone_bytes. */
  for (int i = 0; i < io->npids;) {
    if (io->pass[i] != pass) {
      io->gone_bytes += io->bytes[i];
      total += io->bytes[i];
      io->npids--;
      io->pid[i] = io->pid[io->npids];
      io->bytes[i] = io->bytes[io->npids];
      io->pass[i] = io->pass[io->npids];
      continue;
    }
    total += io->bytes[i++];
  }
  return total;
}
