// SPDX-License-Identifier: GPL-3.0-or-later
/* ergd's write-ahead log of its inputs (agent samples as received bytes,
 * meter readings) that may still feed a cell not yet finalised. Each is
 * appended before it is applied; on start the segments left are replayed
 * through the same ingest as live input, so a kill -9 of ergd loses none of
 * what it had received (docs/architecture.md "Durability").
 *
 * Files: DIR/wal-<seq>.log, a 16-byte header then records of
 *   u32 len | u32 crc32 | u32 type | u32 0 | i64 data_s | len bytes
 * where the CRC covers everything after it. A segment is closed every
 * rotate_seconds and deleted once every record in it is older than the
 * oldest open cell (data_s <= done_s). A torn or corrupt record (kill -9
 * in the middle of a write, a bad disk) ends its segment's replay. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector_int.h"

#define WAL_MAGIC "ERGWAL01"
#define WAL_HDR 16
#define WAL_REC_HDR 24
#define WAL_REC_MAX (64u << 20)

struct wal_segment {
  uint64_t seq;
  int64_t max_data_s;
  uint64_t bytes;
};

/* fdatasync runs in a thread of its own: on a loaded disk one takes up to
 * ~80 ms here (1-4 ms median), which the loop would otherwise stall for
 * every second. The loop hands it a dup of each new segment's fd. */
struct wal_syncer {
  pthread_t th;
  bool started, stop;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int fd;      /* the thread's: the segment it syncs */
  int next_fd; /* handed over by wal_start, -1: none */
  uint64_t requested, done;
};

struct wal {
  char dir[600];
  uint32_t layout; /* the caller's record layout version (struct sizes) */
  uint64_t max_bytes;
  int fsync;
  int fd;      /* current segment, -1 before wal_start */
  int lock_fd; /* DIR/lock, locked: one ergd per log */
  int dirty;   /* appended since the last sync */
  struct wal_syncer sync;
  int64_t opened_s;
  struct wal_segment *seg; /* oldest first; the last is current once started */
  size_t nseg;
  uint64_t bytes; /* all segments */
  struct wal_stats st;
  uint64_t failed;       /* records not logged in this spell of errors; 0: none */
  uint64_t last_fail_ns; /* monotonic, the spell's last error */
};

/* A spell of write errors is logged once, at its first, with the file and
 * the reason (a full disk fails every record in the same way), and its end
 * once records were written for WAL_RECOVERED_SECONDS without an error:
 * on a nearly full disk, space freed now and then (an old segment
 * deleted) lets a record through between errors. */
#define WAL_RECOVERED_SECONDS 10

static void wal_write_failed(struct wal *w, const char *path, int err, const char *what) {
  w->st.errors++;
  w->last_fail_ns = erg_time_monotonic_ns();
  if (w->failed++ == 0)
    erg_warn("WAL %s %s: %s; inputs are applied but not logged until writing works again "
             "(counted in erg_wal_records_total{result=\"dropped\"})",
             what, path, strerror(err));
}

static void wal_write_works(struct wal *w, const char *path) {
  if (!w->failed ||
      erg_time_monotonic_ns() - w->last_fail_ns < WAL_RECOVERED_SECONDS * ERG_NS_PER_S)
    return;
  erg_info("WAL: writing %s works again, no error for %d s (%llu records were not logged)", path,
           WAL_RECOVERED_SECONDS, (unsigned long long)w->failed);
  w->failed = 0;
}

static uint32_t wal_crc32(uint32_t crc, const uint8_t *p, size_t n) {
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  crc = ~crc;
  while (n--)
    crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static void wal_path(const struct wal *w, uint64_t seq, char *out, size_t outlen) {
  snprintf(out, outlen, "%s/wal-%016" PRIx64 ".log", w->dir, seq);
}

static int seg_cmp(const void *a, const void *b) {
  uint64_t x = ((const struct wal_segment *)a)->seq, y = ((const struct wal_segment *)b)->seq;
  return x < y ? -1 : x > y;
}

static int wal_add_segment(struct wal *w, uint64_t seq) {
  struct wal_segment *s = realloc(w->seg, (w->nseg + 1) * sizeof *s);
  if (!s)
    return -1;
  w->seg = s;
  w->seg[w->nseg++] = (struct wal_segment){.seq = seq, .max_data_s = INT64_MIN};
  return 0;
}

/* The segments on disk, oldest first. */
static int wal_scan(struct wal *w, char *why, size_t whylen) {
  DIR *d = opendir(w->dir);
  if (!d) {
    snprintf(why, whylen, "WAL directory %s: %s", w->dir, strerror(errno));
    return -1;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    uint64_t seq;
    char tail[8];
    if (sscanf(e->d_name, "wal-%16" SCNx64 ".%7s", &seq, tail) == 2 && !strcmp(tail, "log") &&
        wal_add_segment(w, seq) != 0) {
      closedir(d);
      snprintf(why, whylen, "out of memory");
      return -1;
    }
  }
  closedir(d);
  if (w->nseg)
    qsort(w->seg, w->nseg, sizeof *w->seg, seg_cmp);
  return 0;
}

/* Durable name: the new file's directory entry is synced too. */
static void wal_sync_dir(const char *dir) {
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

static void *wal_sync_main(void *arg) {
  struct wal *w = arg;
  struct wal_syncer *y = &w->sync;
  pthread_mutex_lock(&y->mu);
  for (;;) {
    while (!y->stop && y->requested == y->done && y->next_fd < 0)
      pthread_cond_wait(&y->cv, &y->mu);
    uint64_t req = y->requested;
    int next = y->next_fd, stop = y->stop;
    y->next_fd = -1;
    pthread_mutex_unlock(&y->mu);
    /* The old segment's last appends first, then the new one's name. */
    if (y->fd >= 0)
      fdatasync(y->fd);
    if (next >= 0) {
      if (y->fd >= 0)
        close(y->fd);
      y->fd = next;
      fdatasync(next);
      wal_sync_dir(w->dir);
    }
    pthread_mutex_lock(&y->mu);
    y->done = req;
    if (stop && y->next_fd < 0)
      break;
  }
  pthread_mutex_unlock(&y->mu);
  return NULL;
}

/* Hands a new segment (fd >= 0) or a sync request (fd < 0) to the thread. */
static void wal_sync_request(struct wal *w, int fd) {
  struct wal_syncer *y = &w->sync;
  if (!y->started) {
    y->fd = y->next_fd = -1;
    pthread_mutex_init(&y->mu, NULL);
    pthread_cond_init(&y->cv, NULL);
    y->started = pthread_create(&y->th, NULL, wal_sync_main, w) == 0;
    if (!y->started) {
      if (fd >= 0)
        close(fd);
      return;
    }
  }
  pthread_mutex_lock(&y->mu);
  if (fd >= 0) {
    /* A segment the thread has not taken yet (rotations faster than a
     * sync): synced here, rare. */
    if (y->next_fd >= 0) {
      fdatasync(y->next_fd);
      close(y->next_fd);
    }
    y->next_fd = fd;
  }
  y->requested++;
  pthread_cond_signal(&y->cv);
  pthread_mutex_unlock(&y->mu);
}

static void wal_sync_stop(struct wal *w) {
  struct wal_syncer *y = &w->sync;
  if (!y->started)
    return;
  pthread_mutex_lock(&y->mu);
  y->stop = true;
  pthread_cond_signal(&y->cv);
  pthread_mutex_unlock(&y->mu);
  pthread_join(y->th, NULL);
  if (y->fd >= 0)
    close(y->fd);
  pthread_mutex_destroy(&y->mu);
  pthread_cond_destroy(&y->cv);
}

struct wal *wal_open(const char *dir, uint32_t layout, uint64_t max_bytes, int fsync_each_tick,
                     char *why, size_t whylen) {
  struct wal *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  erg_strlcpy(w->dir, dir, sizeof w->dir);
  w->layout = layout;
  w->max_bytes = max_bytes;
  w->fsync = fsync_each_tick;
  w->fd = -1;
  erg_mkdir_p(dir, 0700);
  /* Two ergd on one log would replay and delete each other's inputs. A
   * POSIX record lock, not flock: it is not inherited by fork, so a page
   * rendering child (web/pages.c) still running after its ergd was killed
   * does not keep the next ergd from its log. */
  char path[700];
  snprintf(path, sizeof path, "%s/lock", dir);
  w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (w->lock_fd < 0 || fcntl(w->lock_fd, F_SETLK, &fl) != 0) {
    snprintf(why, whylen, "%s: %s", path,
             errno == EACCES || errno == EAGAIN ? "in use by another ergd" : strerror(errno));
    if (w->lock_fd >= 0)
      close(w->lock_fd);
    free(w);
    return NULL;
  }
  if (wal_scan(w, why, whylen) != 0) {
    close(w->lock_fd);
    free(w->seg);
    free(w);
    return NULL;
  }
  return w;
}

static int wal_read_all(int fd, void *buf, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t r = read(fd, (char *)buf + off, n - off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return off == 0 && r == 0 ? 0 : -1; /* 0: clean end, -1: torn */
    off += (size_t)r;
  }
  return 1;
}

/* One record: 1 read, 0 end of segment, -1 torn or corrupt. */
static int wal_read_record(int fd, uint32_t *type, int64_t *data_s, uint8_t **buf, size_t *len) {
  uint8_t h[WAL_REC_HDR];
  int rc = wal_read_all(fd, h, sizeof h);
  if (rc <= 0)
    return rc;
  uint32_t n, crc;
  memcpy(&n, h, 4);
  memcpy(&crc, h + 4, 4);
  memcpy(type, h + 8, 4);
  memcpy(data_s, h + 16, 8);
  if (n > WAL_REC_MAX || !(*buf = malloc(n ? n : 1)))
    return -1;
  if ((n && wal_read_all(fd, *buf, n) != 1) ||
      wal_crc32(wal_crc32(0, h + 8, WAL_REC_HDR - 8), *buf, n) != crc) {
    free(*buf);
    return -1;
  }
  *len = n;
  return 1;
}

/* Replays one segment; its max_data_s is learnt on the way. */
static void wal_replay_segment(struct wal *w, struct wal_segment *s, wal_record_fn fn, void *user) {
  char path[700];
  wal_path(w, s->seq, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  uint8_t h[WAL_HDR];
  uint32_t layout = 0;
  if (fd < 0)
    return;
  struct stat st;
  if (fstat(fd, &st) == 0)
    s->bytes = (uint64_t)st.st_size;
  w->bytes += s->bytes;
  if (wal_read_all(fd, h, sizeof h) == 1)
    memcpy(&layout, h + 8, 4);
  if (memcmp(h, WAL_MAGIC, 8) != 0 || layout != w->layout) {
    /* Another version's records would be misread: skip them, say so. */
    if (w->st.torn++ == 0)
      erg_warn("WAL %s: not a segment of this ergd version; skipped (further problems only "
               "counted)",
               path);
    close(fd);
    return;
  }
  uint32_t type;
  int64_t data_s;
  uint8_t *buf;
  size_t len;
  int rc;
  while ((rc = wal_read_record(fd, &type, &data_s, &buf, &len)) == 1) {
    if (data_s > s->max_data_s)
      s->max_data_s = data_s;
    fn(user, (int)type, data_s, buf, len);
    w->st.replayed++;
    free(buf);
  }
  if (rc < 0 && w->st.torn++ == 0)
    erg_warn("WAL %s: torn or corrupt record at offset %lld (kill -9 during a write?); the rest "
             "of the segment is dropped (further ones only counted)",
             path, (long long)lseek(fd, 0, SEEK_CUR));
  close(fd);
}

void wal_replay(struct wal *w, wal_record_fn fn, void *user) {
  for (size_t i = 0; i < w->nseg; i++)
    wal_replay_segment(w, &w->seg[i], fn, user);
}

int wal_start(struct wal *w, int64_t now_s) {
  uint64_t seq = w->nseg ? w->seg[w->nseg - 1].seq + 1 : 1;
  char path[700];
  wal_path(w, seq, path, sizeof path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  uint8_t h[WAL_HDR] = WAL_MAGIC;
  memcpy(h + 8, &w->layout, 4);
  ssize_t hw = fd < 0 ? -1 : write(fd, h, sizeof h);
  int err = fd < 0 || hw < 0 ? errno : ENOSPC; /* a short write: the disk is full */
  if (fd < 0 || hw != (ssize_t)sizeof h || wal_add_segment(w, seq) != 0) {
    if (fd >= 0 && hw == (ssize_t)sizeof h)
      err = ENOMEM;
    if (fd >= 0) {
      close(fd);
      unlink(path); /* no segment without its header */
    }
    wal_write_failed(w, path, err, fd < 0 ? "cannot create" : "cannot write");
    return -1;
  }
  /* The sync thread holds its own descriptor of the old segment and
   * syncs its last appends before it moves to this one. */
  if (w->fd >= 0)
    close(w->fd);
  w->fd = fd;
  w->opened_s = now_s;
  w->seg[w->nseg - 1].bytes = WAL_HDR;
  w->bytes += WAL_HDR;
  w->dirty = 0;
  if (w->fsync)
    wal_sync_request(w, dup(fd));
  return 0;
}

int wal_append(struct wal *w, int type, const void *data, size_t len, int64_t data_s) {
  if (!w || w->fd < 0)
    return -1;
  if (len > WAL_REC_MAX || w->bytes + WAL_REC_HDR + len > w->max_bytes) {
    if (w->st.dropped++ == 0)
      erg_warn("WAL in %s is full (wal_max_bytes); inputs are applied but not logged (further "
               "ones only counted)",
               w->dir);
    return -1;
  }
  uint8_t h[WAL_REC_HDR] = {0};
  uint32_t n = (uint32_t)len, t = (uint32_t)type;
  memcpy(h, &n, 4);
  memcpy(h + 8, &t, 4);
  memcpy(h + 16, &data_s, 8);
  uint32_t crc = wal_crc32(wal_crc32(0, h + 8, WAL_REC_HDR - 8), data, len);
  memcpy(h + 4, &crc, 4);
  /* One writev-like write per record: header and payload in one buffer,
   * so a kill -9 leaves a record whole or cut at its end, never spliced. */
  uint8_t *rec = malloc(WAL_REC_HDR + len);
  if (!rec)
    return -1;
  memcpy(rec, h, WAL_REC_HDR);
  memcpy(rec + WAL_REC_HDR, data, len);
  struct wal_segment *s = &w->seg[w->nseg - 1];
  size_t want = WAL_REC_HDR + len;
  ssize_t wr = write(w->fd, rec, want);
  int err = errno;
  /* A short write (the disk filled up in the middle): the rest once more,
   * which says why when it fails too. */
  if (wr >= 0 && (size_t)wr < want) {
    ssize_t more = write(w->fd, rec + wr, want - (size_t)wr);
    err = more < 0 ? errno : 0;
    wr = more < 0 ? wr : wr + more;
  }
  free(rec);
  char path[700] = "";
  if (wr != (ssize_t)want || w->failed)
    wal_path(w, s->seq, path, sizeof path);
  if (wr != (ssize_t)want) {
    /* No torn record in the middle of the segment: back to its end. */
    if (ftruncate(w->fd, (off_t)s->bytes) != 0 && !err)
      err = errno;
    wal_write_failed(w, path, err ? err : ENOSPC, "cannot write");
    return -1;
  }
  wal_write_works(w, path);
  s->bytes += WAL_REC_HDR + len;
  w->bytes += WAL_REC_HDR + len;
  if (data_s > s->max_data_s)
    s->max_data_s = data_s;
  w->st.appended++;
  w->dirty = 1;
  return 0;
}

/* Deletes closed segments whose every record is older than done_s. */
static void wal_trim(struct wal *w, int64_t done_s) {
  size_t keep = 0, last = w->fd >= 0 ? w->nseg - 1 : w->nseg;
  for (size_t i = 0; i < w->nseg; i++) {
    struct wal_segment *s = &w->seg[i];
    if (i < last && s->max_data_s <= done_s) {
      char path[700];
      wal_path(w, s->seq, path, sizeof path);
      unlink(path);
      w->bytes -= s->bytes < w->bytes ? s->bytes : w->bytes;
      continue;
    }
    w->seg[keep++] = *s;
  }
  w->nseg = keep;
}

int wal_tick(struct wal *w, int64_t now_s, int64_t done_s, int64_t rotate_seconds) {
  if (!w)
    return 0;
  if (w->fsync && w->dirty && w->fd >= 0) {
    wal_sync_request(w, -1);
    w->dirty = 0;
  }
  int rotated = 0;
  if (w->fd < 0 || now_s - w->opened_s >= rotate_seconds)
    rotated = wal_start(w, now_s) == 0;
  wal_trim(w, done_s);
  return rotated;
}

void wal_stats(const struct wal *w, struct wal_stats *out) {
  *out = w ? w->st : (struct wal_stats){0};
  out->bytes = w ? w->bytes : 0;
}

void wal_close(struct wal *w) {
  if (!w)
    return;
  wal_sync_stop(w);
  if (w->fd >= 0) {
    fdatasync(w->fd);
    close(w->fd);
  }
  close(w->lock_fd);
  free(w->seg);
  free(w);
}
