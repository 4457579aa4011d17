// SPDX-License-Identifier: GPL-3.0-or-later
/* CURVE key files for the agent link (ZeroMQ CURVE + ZAP). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "erg_common.h"

/* First token of a line if it looks like a Z85 key, else NULL. */
static const char *key_token(char *line) {
  char *p = line;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '#' || *p == '\0' || *p == '\n')
    return NULL;
  size_t n = strcspn(p, " \t\r\n");
  p[n] = '\0';
  return p;
}

static int key_valid(const char *z85) {
  uint8_t bin[32];
  return strlen(z85) == ERG_KEY_Z85_LEN && zmq_z85_decode(bin, z85) != NULL;
}

int erg_key_read_file(const char *path, char out[ERG_KEY_Z85_LEN + 1], char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[256];
  int lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    const char *k = key_token(line);
    if (!k)
      continue;
    fclose(f);
    if (!key_valid(k)) {
      snprintf(why, whylen, "%s:%d: not a 40-character Z85 CURVE key", path, lineno);
      return -1;
    }
    memcpy(out, k, ERG_KEY_Z85_LEN + 1);
    return 0;
  }
  fclose(f);
  snprintf(why, whylen, "%s: no key in file", path);
  return -1;
}

int erg_key_read_list(const char *path, uint8_t (**keys)[32], char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[512];
  int n = 0, lineno = 0;
  uint8_t(*arr)[32] = NULL;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    const char *k = key_token(line);
    if (!k)
      continue;
    uint8_t(*grown)[32] = realloc(arr, (size_t)(n + 1) * sizeof *arr);
    if (!grown || !key_valid(k)) {
      snprintf(why, whylen, "%s:%d: %s", path, lineno,
               grown ? "not a 40-character Z85 CURVE key" : "out of memory");
      free(grown ? grown : arr);
      fclose(f);
      return -1;
    }
    arr = grown;
    zmq_z85_decode(arr[n++], k);
  }
  fclose(f);
  *keys = arr;
  return n;
}

static int key_write(const char *path, const char *z85, const char *what, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return -1;
  char buf[160];
  int n = snprintf(buf, sizeof buf, "# erg CURVE %s key\n%s\n", what, z85);
  int ok = write(fd, buf, (size_t)n) == n;
  return close(fd) == 0 && ok ? 0 : -1;
}

int erg_key_generate(const char *prefix, char pub_out[ERG_KEY_Z85_LEN + 1], char *why,
                     size_t whylen) {
  char pub[ERG_KEY_Z85_LEN + 1], sec[ERG_KEY_Z85_LEN + 1], p1[1024], p2[1024];
  if (zmq_curve_keypair(pub, sec) != 0) {
    snprintf(why, whylen, "libzmq built without CURVE: %s", zmq_strerror(errno));
    return -1;
  }
  snprintf(p1, sizeof p1, "%s.key", prefix);
  snprintf(p2, sizeof p2, "%s.pub", prefix);
  /* O_EXCL: never overwrite a key someone already deployed. */
  if (key_write(p1, sec, "secret", 0600) != 0) {
    snprintf(why, whylen, "%s: %s", p1, strerror(errno));
    return -1;
  }
  if (key_write(p2, pub, "public", 0644) != 0) {
    snprintf(why, whylen, "%s: %s", p2, strerror(errno));
    unlink(p1);
    return -1;
  }
  memcpy(pub_out, pub, sizeof pub);
  return 0;
}
