// SPDX-License-Identifier: GPL-3.0-or-later
/* For fuzz targets whose API reads a file: the input written to one file
 * in a private temporary directory (removed at exit). */
#ifndef ERG_FUZZ_FILE_H
#define ERG_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[64];
static char fuzz_path[128];

static void fuzz_file_cleanup(void) {
  unlink(fuzz_path);
  rmdir(fuzz_dir);
}

/* Writes data to DIR/name (DIR made once); returns the path, NULL on error. */
static const char *fuzz_file_write(const char *name, const uint8_t *data, size_t size) {
  if (!fuzz_dir[0]) {
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/erg-fuzz-XXXXXX");
    if (!mkdtemp(fuzz_dir)) {
      perror("mkdtemp");
      abort();
    }
    snprintf(fuzz_path, sizeof fuzz_path, "%s/%s", fuzz_dir, name);
    atexit(fuzz_file_cleanup);
  }
  FILE *f = fopen(fuzz_path, "w");
  if (!f)
    return NULL;
  if (size && fwrite(data, 1, size, f) != size) {
    fclose(f);
    return NULL;
  }
  if (fclose(f))
    return NULL;
  return fuzz_path;
}

#endif
