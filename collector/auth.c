/* ZAP handler for CURVE: only agents whose public key is in the
 * authorised list may connect. Runs inside the main loop (the ZAP socket
 * is one more poll item), so it shares state without locks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "collector_int.h"

#define AUTH_REFUSED_REMEMBERED 256

struct auth {
  uint8_t (*keys)[32];
  int nkeys;
  uint8_t refused[AUTH_REFUSED_REMEMBERED][32];
  int nrefused;
  uint64_t accepted, refused_total;
};

struct auth *auth_open(const char *authorized_keys_file, char *why, size_t whylen) {
  struct auth *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  a->nkeys = erg_key_read_list(authorized_keys_file, &a->keys, why, whylen);
  if (a->nkeys < 0) {
    free(a);
    return NULL;
  }
  return a;
}

void auth_close(struct auth *a) {
  if (!a)
    return;
  free(a->keys);
  free(a);
}

uint64_t auth_refused_total(const struct auth *a) { return a ? a->refused_total : 0; }
uint64_t auth_accepted_total(const struct auth *a) { return a ? a->accepted : 0; }

static int auth_known(const struct auth *a, const uint8_t key[32]) {
  for (int i = 0; i < a->nkeys; i++)
    if (!memcmp(a->keys[i], key, 32))
      return 1;
  return 0;
}

/* Logs an unknown key the first time it knocks, then only counts it. */
static void auth_note_refusal(struct auth *a, const uint8_t key[32], const char *address) {
  a->refused_total++;
  for (int i = 0; i < a->nrefused; i++)
    if (!memcmp(a->refused[i], key, 32))
      return;
  if (a->nrefused < AUTH_REFUSED_REMEMBERED)
    memcpy(a->refused[a->nrefused++], key, 32);
  char z85[ERG_KEY_Z85_LEN + 1];
  zmq_z85_encode(z85, key, 32);
  erg_warn("refused agent with unknown CURVE key %s from %s (logged once per key)", z85,
           address);
}

static int zap_recv(void *sock, char *buf, size_t len) {
  int n = zmq_recv(sock, buf, len - 1, 0);
  if (n < 0)
    return -1;
  if ((size_t)n > len - 1)
    n = (int)len - 1;
  buf[n] = '\0';
  return n;
}

static void zap_reply(void *sock, const char *req_id, int id_len, const char *code,
                      const char *text) {
  zmq_send(sock, "1.0", 3, ZMQ_SNDMORE);
  zmq_send(sock, req_id, (size_t)id_len, ZMQ_SNDMORE);
  zmq_send(sock, code, strlen(code), ZMQ_SNDMORE);
  zmq_send(sock, text, strlen(text), ZMQ_SNDMORE);
  zmq_send(sock, "", 0, ZMQ_SNDMORE);
  zmq_send(sock, "", 0, 0);
}

/* One ZAP request: version, id, domain, address, identity, mechanism,
 * then the client's 32-byte public key for CURVE. */
void auth_handle(struct auth *a, void *zap) {
  char frames[7][256];
  int lens[7] = {0}, more = 1, n = 0;
  uint8_t key[32] = {0};
  int keylen = 0;
  while (more) {
    char tmp[256];
    int len = zap_recv(zap, tmp, sizeof tmp);
    if (len < 0)
      return;
    if (n < 7) {
      memcpy(frames[n], tmp, (size_t)len + 1);
      lens[n] = len;
    } else if (n == 7 && len == 32) {
      memcpy(key, tmp, 32);
      keylen = 32;
    }
    n++;
    size_t sz = sizeof more;
    zmq_getsockopt(zap, ZMQ_RCVMORE, &more, &sz);
  }
  /* Frame 6 is the first credential frame: the client key. */
  if (n >= 7 && lens[6] == 32) {
    memcpy(key, frames[6], 32);
    keylen = 32;
  }
  int ok = n >= 7 && !strcmp(frames[5], "CURVE") && keylen == 32 && auth_known(a, key);
  if (ok) {
    a->accepted++;
    zap_reply(zap, frames[1], lens[1], "200", "OK");
  } else {
    if (keylen == 32)
      auth_note_refusal(a, key, n > 3 ? frames[3] : "?");
    else
      a->refused_total++;
    zap_reply(zap, frames[1], n > 1 ? lens[1] : 0, "400", "unknown key");
  }
}
