// SPDX-License-Identifier: GPL-3.0-or-later
/* ZAP handler for CURVE: only agents whose public key is in the
 * authorised list may connect, and a key bound to node names may only
 * report as those nodes (authorised-keys line "KEY NODE[,NODE...] [# ...]").
 * Runs inside the main loop (the ZAP socket is one more poll item), so it
 * shares state without locks. A socket monitor on the agent socket sees
 * the handshakes that fail before ZAP is asked: plaintext agents and
 * agents that pinned another collector key. docs/config.md
 * "authorized_keys_file". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "collector_int.h"

#define AUTH_REFUSED_REMEMBERED 256
#define AUTH_MONITOR_ENDPOINT "inproc://erg-auth-monitor"
#define AUTH_LINE_MAX 4096

/* Handshakes that fail before ZAP is asked, seen by the socket monitor. */
enum { AUTH_PLAINTEXT, AUTH_HANDSHAKE, AUTH_INCOMPLETE, AUTH_NFAILS };
static const char *const auth_fail_reasons[AUTH_NFAILS] = {"plaintext", "handshake", "incomplete"};

struct auth_key {
  uint8_t key[32];
  char **names; /* the nodes this key may report as */
  size_t nnames;
  int unbound; /* a line of the key names no node: any node (warned about) */
  int star;    /* a line says "*": any node, knowingly */
  int line;    /* first line of the key in the file */
  int mismatch_logged;
};

struct auth {
  struct auth_key *keys;
  int nkeys;
  uint8_t refused[AUTH_REFUSED_REMEMBERED][32];
  int nrefused;
  uint64_t accepted, refused_total, mismatch;
  uint64_t fails[AUTH_NFAILS];
  unsigned fails_logged;
  void *monitor;
};

static void auth_free_keys(struct auth *a) {
  for (int i = 0; i < a->nkeys; i++) {
    for (size_t k = 0; k < a->keys[i].nnames; k++)
      free(a->keys[i].names[k]);
    free(a->keys[i].names);
  }
  free(a->keys);
  a->keys = NULL;
  a->nkeys = 0;
}

/* The words of rest (up to a '#', separated by blanks or commas) as more
 * node names of the key; a line without any leaves the key unbound. */
static int auth_parse_names(struct auth_key *k, char *rest) {
  rest[strcspn(rest, "#")] = '\0';
  char *save = NULL;
  int words = 0;
  for (char *w = strtok_r(rest, " \t\r\n,", &save); w; w = strtok_r(NULL, " \t\r\n,", &save)) {
    words++;
    if (!strcmp(w, "*")) {
      k->star = 1;
      continue;
    }
    char **grown = realloc(k->names, (k->nnames + 1) * sizeof *grown);
    if (!grown || !(grown[k->nnames] = strdup(w))) {
      if (grown)
        k->names = grown;
      return -1;
    }
    k->names = grown;
    k->nnames++;
  }
  if (!words)
    k->unbound = 1;
  return 0;
}

static struct auth_key *auth_find(struct auth *a, const uint8_t key[32]) {
  for (int i = 0; i < a->nkeys; i++)
    if (!memcmp(a->keys[i].key, key, 32))
      return &a->keys[i];
  return NULL;
}

/* One key per line, optionally followed by the node names it may report
 * as; a key listed twice may report as the names of both lines. */
static int auth_read(struct auth *a, const char *path, char *why, size_t whylen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[AUTH_LINE_MAX];
  int lineno = 0, rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      snprintf(why, whylen, "%s:%d: line longer than %d bytes", path, lineno, AUTH_LINE_MAX - 2);
      rc = -1;
      break;
    }
    char *p = line + strspn(line, " \t");
    if (*p == '#' || *p == '\0' || *p == '\n' || *p == '\r')
      continue;
    size_t n = strcspn(p, " \t\r\n");
    char z85[ERG_KEY_Z85_LEN + 1];
    uint8_t bin[32];
    if (n != ERG_KEY_Z85_LEN || (memcpy(z85, p, n), z85[n] = '\0', !zmq_z85_decode(bin, z85))) {
      snprintf(why, whylen, "%s:%d: not a 40-character Z85 CURVE key", path, lineno);
      rc = -1;
      break;
    }
    struct auth_key *k = auth_find(a, bin);
    if (!k) {
      struct auth_key *grown = realloc(a->keys, (size_t)(a->nkeys + 1) * sizeof *grown);
      if (!grown) {
        snprintf(why, whylen, "out of memory");
        rc = -1;
        break;
      }
      a->keys = grown;
      k = &a->keys[a->nkeys++];
      *k = (struct auth_key){.line = lineno};
      memcpy(k->key, bin, 32);
    }
    if (auth_parse_names(k, p + n) != 0) {
      snprintf(why, whylen, "out of memory");
      rc = -1;
    }
  }
  fclose(f);
  return rc;
}

struct auth *auth_open(const char *authorized_keys_file, char *why, size_t whylen) {
  struct auth *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  if (auth_read(a, authorized_keys_file, why, whylen) != 0) {
    auth_close(a);
    return NULL;
  }
  int unbound = 0, first = 0;
  for (int i = 0; i < a->nkeys; i++)
    if (a->keys[i].unbound && !unbound++)
      first = a->keys[i].line;
  if (unbound)
    erg_warn("%s: %d of %d CURVE keys are bound to no node name (first on line %d): "
             "agents with them may report as any node; write the node names after each key "
             "(\"KEY NODE[,NODE...]\", or \"KEY *\" to allow any node knowingly)",
             authorized_keys_file, unbound, a->nkeys, first);
  return a;
}

void auth_close(struct auth *a) {
  if (!a)
    return;
  if (a->monitor) {
    int zero = 0;
    zmq_setsockopt(a->monitor, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(a->monitor);
  }
  auth_free_keys(a);
  free(a);
}

uint64_t auth_refused_total(const struct auth *a) { return a ? a->refused_total : 0; }
uint64_t auth_accepted_total(const struct auth *a) { return a ? a->accepted : 0; }

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
  erg_warn("refused agent with unknown CURVE key %s from %s (logged once per key)", z85, address);
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

/* user_id becomes the "User-Id" of every message of the connection. */
static void zap_reply(void *sock, const char *req_id, int id_len, const char *code,
                      const char *text, const char *user_id) {
  zmq_send(sock, "1.0", 3, ZMQ_SNDMORE);
  zmq_send(sock, req_id, (size_t)id_len, ZMQ_SNDMORE);
  zmq_send(sock, code, strlen(code), ZMQ_SNDMORE);
  zmq_send(sock, text, strlen(text), ZMQ_SNDMORE);
  zmq_send(sock, user_id, strlen(user_id), ZMQ_SNDMORE);
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
  const struct auth_key *k =
      n >= 7 && !strcmp(frames[5], "CURVE") && keylen == 32 ? auth_find(a, key) : NULL;
  if (k) {
    /* The key's index: auth_admit finds its node names by it. */
    char user_id[16];
    snprintf(user_id, sizeof user_id, "%d", (int)(k - a->keys));
    a->accepted++;
    zap_reply(zap, frames[1], lens[1], "200", "OK", user_id);
  } else {
    if (keylen == 32)
      auth_note_refusal(a, key, n > 3 ? frames[3] : "?");
    else
      a->refused_total++;
    zap_reply(zap, frames[1], n > 1 ? lens[1] : 0, "400", "unknown key", "");
  }
}

/* ---- node binding ---- */

static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 0;
  }
  return -1;
}

/* Steps over one field's value of wire type wt; for length-delimited
 * values *val and *len are the bytes. -1: not protobuf (groups included,
 * which protobuf-c does not take either). */
static int pb_value(const uint8_t **p, const uint8_t *end, int wt, const uint8_t **val,
                    size_t *len) {
  uint64_t v;
  switch (wt) {
    case 0:
      return pb_varint(p, end, &v);
    case 1:
    case 5: {
      size_t n = wt == 1 ? 8 : 4;
      if ((size_t)(end - *p) < n)
        return -1;
      *p += n;
      return 0;
    }
    case 2:
      if (pb_varint(p, end, &v) != 0 || v > (uint64_t)(end - *p))
        return -1;
      *val = *p;
      *len = (size_t)v;
      *p += v;
      return 0;
    default:
      return -1;
  }
}

static int auth_name_allowed(const struct auth_key *k, const uint8_t *name, size_t len) {
  for (size_t i = 0; i < k->nnames; i++)
    if (strlen(k->names[i]) == len && !memcmp(k->names[i], name, len))
      return 1;
  return 0;
}

/* Every node name the message carries: field 1 (node) of the Envelope's
 * hello (2) and sample (3), in every occurrence, since protobuf merges
 * repeated occurrences and the last value wins (erg.proto). Returns 1
 * when k may report as all of them, 0 at the first it may not (that name
 * in *bad, *badlen), -1 when the bytes are no protobuf. */
static int auth_walk_nodes(const uint8_t *buf, size_t len, const struct auth_key *k,
                           const uint8_t **bad, size_t *badlen) {
  const uint8_t *p = buf, *end = buf + len;
  while (p < end) {
    uint64_t tag;
    const uint8_t *body = NULL;
    size_t blen = 0;
    if (pb_varint(&p, end, &tag) != 0 || pb_value(&p, end, (int)(tag & 7), &body, &blen) != 0)
      return -1;
    if ((tag >> 3 != 2 && tag >> 3 != 3) || (tag & 7) != 2)
      continue;
    const uint8_t *q = body, *qend = body + blen;
    while (q < qend) {
      uint64_t t;
      const uint8_t *s = NULL;
      size_t slen = 0;
      if (pb_varint(&q, qend, &t) != 0 || pb_value(&q, qend, (int)(t & 7), &s, &slen) != 0)
        return -1;
      if (t >> 3 == 1 && (t & 7) == 2 && !auth_name_allowed(k, s, slen)) {
        *bad = s;
        *badlen = slen;
        return 0;
      }
    }
  }
  return 1;
}

int auth_admit(struct auth *a, struct zmq_msg_t *msg) {
  if (!a)
    return 1;
  /* The key's index, set by auth_handle; only connections ZAP accepted
   * have one. */
  const char *uid = zmq_msg_gets(msg, "User-Id");
  char *end = NULL;
  long i = uid ? strtol(uid, &end, 10) : -1;
  if (!uid || end == uid || *end)
    i = -1;
  return auth_check_nodes(a, (int)i, zmq_msg_data(msg), zmq_msg_size(msg));
}

int auth_check_nodes(struct auth *a, int key, const void *buf, size_t len) {
  if (key < 0 || key >= a->nkeys) {
    a->mismatch++; /* never seen: never trusted */
    return 0;
  }
  struct auth_key *k = &a->keys[key];
  if (k->unbound || k->star)
    return 1;
  const uint8_t *bad = NULL;
  size_t badlen = 0;
  int ok = auth_walk_nodes(buf, len, k, &bad, &badlen);
  if (ok == 1)
    return 1;
  a->mismatch++;
  if (!k->mismatch_logged) {
    k->mismatch_logged = 1;
    char z85[ERG_KEY_Z85_LEN + 1], names[256] = "";
    zmq_z85_encode(z85, k->key, 32);
    for (size_t j = 0, o = 0; j < k->nnames && o < sizeof names - 1; j++)
      o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", j ? "," : "", k->names[j]);
    if (ok < 0)
      erg_warn("refused an agent message with CURVE key %s (authorized_keys line %d): its "
               "node name could not be read (logged once per key, counted in "
               "erg_auth_node_mismatch_total)",
               z85, k->line);
    else
      erg_warn("refused agent messages for node '%.*s' with CURVE key %s: authorized_keys "
               "line %d binds it to %s (logged once per key, counted in "
               "erg_auth_node_mismatch_total)",
               (int)(badlen > 96 ? 96 : badlen), (const char *)bad, z85, k->line, names);
  }
  return 0;
}

/* ---- handshakes that fail before ZAP ---- */

void auth_monitor(struct auth *a, void *zctx, void *agents) {
  if (!a)
    return;
  int zero = 0;
  if (zmq_socket_monitor(agents, AUTH_MONITOR_ENDPOINT,
                         ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0 ||
      !(a->monitor = zmq_socket(zctx, ZMQ_PAIR)) ||
      zmq_setsockopt(a->monitor, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
      zmq_connect(a->monitor, AUTH_MONITOR_ENDPOINT) != 0) {
    erg_warn("CURVE: cannot watch the agent socket's handshakes (%s): plaintext agents are "
             "refused but not counted",
             zmq_strerror(errno));
    if (a->monitor)
      zmq_close(a->monitor);
    a->monitor = NULL;
  }
}

/* Each kind of failure is logged once. A plaintext agent is seen as such
 * when ergd reads its greeting first; when the agent saw the mismatch
 * first and closed, ergd only sees a connection closed during the
 * handshake (EPIPE, ECONNRESET), which a port scan or TCP health check
 * also is: "incomplete". */
static void auth_fail(struct auth *a, int kind, uint32_t value, const char *ep, int eplen) {
  a->fails[kind]++;
  if (a->fails_logged & (1u << kind))
    return;
  a->fails_logged |= 1u << kind;
  if (kind == AUTH_PLAINTEXT)
    erg_warn("refused an agent connection without CURVE (plaintext) on %.*s: this ergd takes "
             "CURVE only, give the agent curve_secret_key_file and curve_server_key (logged "
             "once, counted in erg_auth_refused_total{reason=\"plaintext\"})",
             eplen, ep);
  else if (kind == AUTH_HANDSHAKE)
    erg_warn("an agent connection failed its CURVE handshake on %.*s (%s 0x%x): wrong "
             "curve_server_key on the agent, or not an erg agent (logged once, counted in "
             "erg_auth_refused_total{reason=\"handshake\"})",
             eplen, ep,
             value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC ? "cannot decrypt its hello,"
                                                            : "ZMTP protocol error",
             value);
  else
    erg_warn("a connection on %.*s closed during the CURVE handshake (%s): an agent without "
             "CURVE (plaintext), a port scan or a TCP health check (logged once, counted in "
             "erg_auth_refused_total{reason=\"incomplete\"})",
             eplen, ep, value ? strerror((int)value) : "closed by the peer");
}

void auth_poll(struct auth *a) {
  if (!a || !a->monitor)
    return;
  zmq_msg_t ev, addr;
  zmq_msg_init(&ev);
  zmq_msg_init(&addr);
  /* Each event: 2 bytes event, 4 bytes value, then the endpoint frame. */
  while (zmq_msg_recv(&ev, a->monitor, ZMQ_DONTWAIT) >= 0) {
    if (zmq_msg_more(&ev) && zmq_msg_recv(&addr, a->monitor, ZMQ_DONTWAIT) < 0)
      break;
    if (zmq_msg_size(&ev) < 6)
      continue;
    uint16_t event;
    uint32_t value;
    memcpy(&event, zmq_msg_data(&ev), 2);
    memcpy(&value, (const char *)zmq_msg_data(&ev) + 2, 4);
    int kind = event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL         ? AUTH_INCOMPLETE
               : value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH ? AUTH_PLAINTEXT
                                                                     : AUTH_HANDSHAKE;
    auth_fail(a, kind, value, zmq_msg_data(&addr), (int)zmq_msg_size(&addr));
  }
  zmq_msg_close(&ev);
  zmq_msg_close(&addr);
}

void auth_metrics(const struct auth *a, FILE *f) {
  if (!a)
    return;
  fprintf(f,
          "# HELP erg_auth_refused_total Agent connections a CURVE ergd refused: key not "
          "in authorized_keys_file (unknown_key), no CURVE (plaintext), CURVE handshake "
          "failed before the key check (handshake: wrong curve_server_key, not erg), "
          "closed during the handshake (incomplete: plaintext agents too, port scans).\n"
          "# TYPE erg_auth_refused_total counter\n"
          "erg_auth_refused_total{reason=\"unknown_key\"} %llu\n",
          (unsigned long long)a->refused_total);
  for (int k = 0; k < AUTH_NFAILS; k++)
    fprintf(f, "erg_auth_refused_total{reason=\"%s\"} %llu\n", auth_fail_reasons[k],
            (unsigned long long)a->fails[k]);
  fprintf(f,
          "# HELP erg_auth_node_mismatch_total Agent messages refused because their "
          "CURVE key is not bound to the node they name (authorized_keys_file).\n"
          "# TYPE erg_auth_node_mismatch_total counter\n"
          "erg_auth_node_mismatch_total %llu\n",
          (unsigned long long)a->mismatch);
}
