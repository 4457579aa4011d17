// SPDX-License-Identifier: GPL-3.0-or-later
/* Helpers shared by the fit tests. */
#ifndef FIT_TEST_H
#define FIT_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes text to a fresh temp file; returns its malloc'd path. */
static inline char *fit_test_file(const char *text) {
  char *path = strdup("/tmp/erg-fit-test-XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0)
    abort();
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

static inline void fit_test_unlink(char *path) {
  unlink(path);
  free(path);
}

#endif
