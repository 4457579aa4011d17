// SPDX-License-Identifier: GPL-3.0-or-later
/* The data directory's format version (docs/store.md "Data directory format
 * and upgrades"): DATA_DIR/FORMAT, one line "erg-data N". Checked once at
 * start, before anything is opened or created in the directory, so that an
 * ergd never writes into a layout it does not know. Returns errors and
 * notes to its caller (erg_collector_run), which logs them; logs nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector_int.h"
#include "erg_common.h"

#define FORMAT_NAME "FORMAT"
#define FORMAT_MAGIC "erg-data "

/* Reads FORMAT's first line: the version (>= 1), 0 when there is no
 * FORMAT, or -1 with why. Later lines are ignored (room for a later format
 * to say more). */
static int format_read(const char *path, char *why, size_t whylen) {
  char buf[64];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0) {
    snprintf(why, whylen, "cannot read %s: %s; this ergd reads format %d", path, strerror(errno),
             ERG_DATA_FORMAT);
    return -1;
  }
  struct stat st;
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    do
      n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
  } else {
    errno = EISDIR; /* a directory, a FIFO, a device: no format file */
  }
  int err = errno;
  close(fd);
  if (n < 0) {
    snprintf(why, whylen, "cannot read %s: %s; this ergd reads format %d", path,
             err == EISDIR ? "not a plain file" : strerror(err), ERG_DATA_FORMAT);
    return -1;
  }
  char *nl = memchr(buf, '\n', (size_t)n);
  size_t line = nl ? (size_t)(nl - buf) : (size_t)n;
  int whole = nl || (size_t)n < sizeof buf - 1; /* the line ended in what was read */
  int nul = memchr(buf, '\0', line) != NULL;
  buf[line] = '\0';
  while (line > 0 && (buf[line - 1] == '\r' || buf[line - 1] == ' ' || buf[line - 1] == '\t'))
    buf[--line] = '\0';
  const char *p = buf + strlen(FORMAT_MAGIC);
  long v = 0;
  int ok = whole && !nul && line > strlen(FORMAT_MAGIC) &&
           !strncmp(buf, FORMAT_MAGIC, strlen(FORMAT_MAGIC)) && *p >= '1' && *p <= '9' &&
           strlen(p) <= 9;
  for (; ok && *p; p++) {
    if (*p < '0' || *p > '9')
      ok = 0;
    else
      v = v * 10 + (*p - '0');
  }
  if (!ok) {
    /* Quote what was found, printable bytes only. */
    for (size_t i = 0; i < line; i++)
      if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
        buf[i] = '?';
    if (line > 40)
      strcpy(buf + 40, "...");
    snprintf(why, whylen,
             "%s is garbled (first line \"%s\", not \"erg-data N\"); this ergd reads "
             "format %d: restore the file or point data_dir elsewhere",
             path, whole ? buf : "(too long)", ERG_DATA_FORMAT);
    return -1;
  }
  return (int)v;
}

/* Writes FORMAT = "erg-data ERG_DATA_FORMAT", synced, so a crash leaves the
 * old state or the new. */
static int format_write(const char *path, char *why, size_t whylen) {
  char line[32];
  int len = snprintf(line, sizeof line, FORMAT_MAGIC "%d\n", ERG_DATA_FORMAT);
  if (erg_write_file_durable(path, line, (size_t)len) != 0) {
    snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

static int is_dir(const char *dir, const char *name) {
  char path[4200];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Brings a data dir of format `from` (< ERG_DATA_FORMAT) to the current
 * one, step by step; FORMAT is written after the last step only, so an
 * interrupted migration runs again. 0 or -1 with why. */
static int format_migrate(const char *dir, int from, char *why, size_t whylen) {
  (void)dir;
  for (int v = from; v < ERG_DATA_FORMAT; v++) {
    switch (v) {
      /* case 1: format 1 -> 2 goes here when ERG_DATA_FORMAT becomes 2
       * (rename, convert, ...; each step must be safe to run again). */
      default:
        snprintf(why, whylen, "data dir %s: no migration from format %d to %d", dir, v, v + 1);
        return -1;
    }
  }
  return 0;
}

int datadir_prepare(const char *dir, char *note, size_t notelen, char *why, size_t whylen) {
  char path[4200];
  if (notelen)
    note[0] = '\0';
  if (snprintf(path, sizeof path, "%s/" FORMAT_NAME, dir) >= (int)sizeof path) {
    snprintf(why, whylen, "data dir %s: path too long", dir);
    return -1;
  }
  int v = format_read(path, why, whylen);
  if (v < 0)
    return -1;
  if (v > 0) {
    if (v == ERG_DATA_FORMAT)
      return 0;
    if (v > ERG_DATA_FORMAT) {
      snprintf(why, whylen,
               "%s was written by a newer erg (format %d); this ergd reads format %d: "
               "upgrade erg or point data_dir elsewhere",
               path, v, ERG_DATA_FORMAT);
      return -1;
    }
    if (format_migrate(dir, v, why, whylen) != 0 || format_write(path, why, whylen) != 0)
      return -1;
    snprintf(note, notelen, "data dir %s: migrated from format %d to format %d", dir, v,
             ERG_DATA_FORMAT);
    return 0;
  }
  /* No FORMAT: a new directory, or one an erg from before FORMAT wrote
   * (the same layout as format 1: nothing to convert). */
  int earlier = is_dir(dir, "nodes") || is_dir(dir, "journal") || is_dir(dir, "cluster");
  if (erg_mkdir_p(dir, 0755) != 0) {
    snprintf(why, whylen, "data dir %s: cannot create it: %s", dir, strerror(errno));
    return -1;
  }
  if (format_write(path, why, whylen) != 0)
    return -1;
  if (earlier)
    snprintf(note, notelen, "data dir %s: marked format %d (written by an earlier erg)", dir,
             ERG_DATA_FORMAT);
  return 0;
}
