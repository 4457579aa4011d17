// SPDX-License-Identifier: GPL-3.0-or-later
/* erg keygen PREFIX: a CURVE key pair for the agents' link to ergd. */
#include <stdio.h>

#include "erg_cli.h"
#include "erg_common.h"

int erg_keygen_cli(int argc, char **argv) {
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: erg keygen PREFIX   (writes PREFIX.key, mode 0600, and PREFIX.pub)\n");
    return 1;
  }
  char pub[ERG_KEY_Z85_LEN + 1], why[600];
  if (erg_key_generate(argv[1], pub, why, sizeof why) != 0) {
    fprintf(stderr, "erg: keygen: %s\n", why);
    return 2;
  }
  printf("%s.key: secret key (keep it on this host)\n%s.pub: %s\n", argv[1], argv[1], pub);
  return 0;
}
