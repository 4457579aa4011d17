// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg_common.h"

long erg_read_file(const char *path, char *buf, size_t buflen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t off = 0;
  while (off + 1 < buflen) {
    ssize_t n = read(fd, buf + off, buflen - 1 - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      close(fd);
      return -1;
    }
    if (n == 0)
      break;
    off += (size_t)n;
  }
  close(fd);
  buf[off] = '\0';
  return (long)off;
}

int erg_mkdir_p(const char *path, unsigned mode) {
  char tmp[4096];
  if (strlen(path) >= sizeof tmp)
    return -1;
  strcpy(tmp, path);
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  if (mkdir(tmp, mode) != 0 && errno != EEXIST)
    return -1;
  return 0;
}

/* Temp file + rename; with sync, the file is fsync'ed before the rename
 * and its directory after (best effort), so a power loss leaves the old
 * content or the new. errno says why on failure. */
static int write_file_replace(const char *path, const void *data, size_t len, int sync) {
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return -1;
  const char *p = data;
  size_t off = 0;
  int rc = 0;
  while (rc == 0 && off < len) {
    ssize_t n = write(fd, p + off, len - off);
    if (n < 0 && errno != EINTR)
      rc = -1;
    else if (n > 0)
      off += (size_t)n;
  }
  if (rc == 0 && sync && fsync(fd) != 0)
    rc = -1;
  int err = errno;
  if (close(fd) != 0 && rc == 0) {
    rc = -1;
    err = errno;
  }
  if (rc == 0 && rename(tmp, path) != 0) {
    rc = -1;
    err = errno;
  }
  if (rc != 0) {
    unlink(tmp);
    errno = err;
    return -1;
  }
  if (sync) {
    char dir[4200];
    erg_strlcpy(dir, path, sizeof dir);
    char *slash = strrchr(dir, '/');
    const char *d = !slash ? "." : slash == dir ? "/" : dir;
    if (slash && slash != dir)
      *slash = '\0';
    int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  }
  return 0;
}

int erg_write_file_atomic(const char *path, const void *data, size_t len) {
  return write_file_replace(path, data, len, 0);
}

int erg_write_file_durable(const char *path, const void *data, size_t len) {
  return write_file_replace(path, data, len, 1);
}

int erg_state_file_write(const char *path, const char *text, char *why, size_t whylen) {
  if (erg_write_file_atomic(path, text, strlen(text)) != 0) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int erg_state_file_read(const char *path, char *buf, size_t buflen, char *why, size_t whylen) {
  if (erg_read_file(path, buf, buflen) >= 0)
    return 1;
  if (errno == ENOENT)
    return 0;
  snprintf(why, whylen, "%s: %s", path, strerror(errno));
  return -1;
}
