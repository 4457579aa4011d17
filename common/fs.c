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

int erg_write_file_atomic(const char *path, const void *data, size_t len) {
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
    return -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  const char *p = data;
  size_t off = 0;
  while (off < len) {
    ssize_t n = write(fd, p + off, len - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      close(fd);
      unlink(tmp);
      return -1;
    }
    off += (size_t)n;
  }
  if (close(fd) != 0 || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}
