// SPDX-License-Identifier: GPL-3.0-or-later
/* BMC power over IPMI DCMI (libfreeipmi): Get Power Reading's current
 * power, out of band over IPMI 2.0 lanplus (host[:port], user,
 * password_file, cipher_suite) or in band (host = local, or device =
 * /dev/ipmiN). One channel: the server's power. ergd's meter thread calls
 * it (collector/meters.c), so a BMC that answers in seconds blocks only
 * that thread, and each request is bounded by timeout_seconds x (retries
 * + 1). The answer is decoded by dcmi.c. */
#include <errno.h>
#include <freeipmi/freeipmi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erg_common.h"
#include "erg_pdu.h"

#define IPMI_PORT 623
/* After a refused login, the next try waits: a BMC may lock the account
 * of a user whose logins fail every second. */
#define IPMI_LOGIN_BACKOFF_NS (60ULL * 1000000000ULL)
#define IPMI_PASSWORD_MAX 20 /* IPMI 2.0 */
#define IPMI_USER_MAX 16

struct ipmi_priv {
  ipmi_ctx_t ctx;
  bool open;   /* session (or device) open */
  bool inband; /* host = local or a device */
  char where[192];
  char password[IPMI_PASSWORD_MAX + 1];
  unsigned session_ms, retransmit_ms;
  uint8_t privilege, cipher;
  uint64_t login_next_ns; /* monotonic; 0: log in at the next poll */
  char login_why[200];    /* the refused login's reason, repeated until then */
  char bad_why[240];      /* the last answer that was no reading, "" none */
  char note[240];         /* to say once (inactive but non-zero) */
  bool note_said, note_due;
  double login_seconds, request_seconds; /* the last ones, NAN not tried */
  struct erg_dcmi_power last;
  bool answered;
};

static bool ipmi_is_inband(const struct erg_pdu_source_config *c) {
  return c->device[0] || !strcmp(c->host, "local");
}

static int ipmi_privilege(const char *name, uint8_t *out) {
  if (!name[0] || !strcasecmp(name, "user"))
    *out = IPMI_PRIVILEGE_LEVEL_USER;
  else if (!strcasecmp(name, "operator"))
    *out = IPMI_PRIVILEGE_LEVEL_OPERATOR;
  else if (!strcasecmp(name, "admin") || !strcasecmp(name, "administrator"))
    *out = IPMI_PRIVILEGE_LEVEL_ADMIN;
  else
    return -1;
  return 0;
}

/* The cipher suites libfreeipmi speaks, all with authentication. */
static bool ipmi_cipher_ok(int id) {
  static const int ok[] = {1, 2, 3, 6, 7, 8, 11, 12, 15, 16, 17};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (ok[i] == id)
      return true;
  return false;
}

/* The password file: a regular file no other user can read (root:erg
 * 0640 or erg 0600). Only stat here: check-config may run as a user that
 * cannot read it. */
static int ipmi_password_file_check(const char *path, char *why, size_t whylen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(why, whylen, "password_file %s: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "password_file %s: not a regular file", path);
    return -1;
  }
  if (st.st_mode & (S_IROTH | S_IWOTH)) {
    snprintf(why, whylen,
             "password_file %s: mode %04o lets every user %s it; refused (chmod o-rw: readable "
             "by ergd only)",
             path, (unsigned)(st.st_mode & 07777), st.st_mode & S_IROTH ? "read" : "write");
    return -1;
  }
  return 0;
}

/* Its first line, without the newline. */
static int ipmi_password_read(const char *path, char *out, size_t len, char *why, size_t whylen) {
  if (ipmi_password_file_check(path, why, whylen))
    return -1;
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, whylen, "password_file %s: %s", path, strerror(errno));
    return -1;
  }
  char buf[256];
  if (!fgets(buf, sizeof buf, f))
    buf[0] = '\0';
  fclose(f);
  buf[strcspn(buf, "\r\n")] = '\0';
  int rc = 0;
  if (strlen(buf) >= len) {
    snprintf(why, whylen, "password_file %s: the password is longer than IPMI 2.0's %zu bytes",
             path, len - 1);
    rc = -1;
  } else {
    memcpy(out, buf, strlen(buf) + 1);
  }
  memset(buf, 0, sizeof buf);
  return rc;
}

static int ipmi_check(const struct erg_pdu_source_config *c, char *why, size_t whylen) {
  uint8_t priv;
  if (ipmi_privilege(c->privilege, &priv)) {
    snprintf(why, whylen, "privilege '%s' is not one of user, operator, admin", c->privilege);
    return -1;
  }
  if (ipmi_is_inband(c))
    return 0;
  if (!c->host[0]) {
    snprintf(why, whylen,
             "driver ipmi needs host (the BMC, out of band) or host = local / device = "
             "/dev/ipmi0 (in band)");
    return -1;
  }
  if (c->cipher_suite && !ipmi_cipher_ok(c->cipher_suite)) {
    snprintf(
        why, whylen,
        "cipher_suite %d: want one with authentication, 1, 2, 3, 6, 7, 8, 11, 12, 15, 16 or 17 "
        "(3 unless the BMC needs another; 17 on newer BMCs)",
        c->cipher_suite);
    return -1;
  }
  if (!c->user[0] || strlen(c->user) > IPMI_USER_MAX) {
    snprintf(why, whylen, "driver ipmi out of band needs user (1..%d characters)", IPMI_USER_MAX);
    return -1;
  }
  if (!c->password_file[0]) {
    snprintf(why, whylen,
             "driver ipmi out of band needs password_file (the BMC user's password, a file "
             "readable by ergd only)");
    return -1;
  }
  return ipmi_password_file_check(c->password_file, why, whylen);
}

static int ipmi_open_src(struct erg_pdu_source *src, char *why, size_t whylen) {
  const struct erg_pdu_source_config *c = &src->cfg;
  if (ipmi_check(c, why, whylen))
    return -1;
  struct ipmi_priv *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  p->inband = ipmi_is_inband(c);
  ipmi_privilege(c->privilege, &p->privilege);
  p->cipher = (uint8_t)(c->cipher_suite ? c->cipher_suite : 3);
  double to = c->timeout_seconds > 0 ? c->timeout_seconds : 1.0;
  int tries = c->retries >= 0 ? c->retries + 1 : 1;
  p->retransmit_ms = (unsigned)(to * 1000);
  p->session_ms = (unsigned)(to * 1000 * tries);
  if (p->session_ms <= p->retransmit_ms) /* libfreeipmi wants it larger */
    p->session_ms = p->retransmit_ms + 1;
  p->login_seconds = p->request_seconds = NAN;
  if (p->inband)
    snprintf(p->where, sizeof p->where, "in band %s", c->device[0] ? c->device : "(local)");
  else
    snprintf(p->where, sizeof p->where, "%s%s%s:%d", strchr(c->host, ':') ? "[" : "", c->host,
             strchr(c->host, ':') ? "]" : "", c->port ? c->port : IPMI_PORT);
  if (!p->inband &&
      ipmi_password_read(c->password_file, p->password, sizeof p->password, why, whylen)) {
    free(p);
    return -1;
  }
  if (!(p->ctx = ipmi_ctx_create())) {
    snprintf(why, whylen, "ipmi_ctx_create: %s", strerror(errno));
    memset(p->password, 0, sizeof p->password);
    free(p);
    return -1;
  }
  src->priv = p;
  if (src->cfg.nchannels == 0) {
    src->cfg.nchannels = 1;
    src->cfg.channels[0] = 1;
  }
  return 0;
}

static bool ipmi_login_refused(int e) {
  return e == IPMI_ERR_USERNAME_INVALID || e == IPMI_ERR_PASSWORD_INVALID ||
         e == IPMI_ERR_K_G_INVALID || e == IPMI_ERR_PRIVILEGE_LEVEL_INSUFFICIENT ||
         e == IPMI_ERR_PRIVILEGE_LEVEL_CANNOT_BE_OBTAINED ||
         e == IPMI_ERR_AUTHENTICATION_TYPE_UNAVAILABLE ||
         e == IPMI_ERR_CIPHER_SUITE_ID_UNAVAILABLE || e == IPMI_ERR_IPMI_2_0_UNAVAILABLE;
}

/* Opens the session (lanplus) or the device (in band). */
static int ipmi_login(struct erg_pdu_source *src, char *why, size_t whylen) {
  struct ipmi_priv *p = src->priv;
  const struct erg_pdu_source_config *c = &src->cfg;
  uint64_t now = erg_time_monotonic_ns();
  if (p->login_next_ns && now < p->login_next_ns) {
    snprintf(why, whylen, "%s (next login try in %.0f s)", p->login_why,
             (double)(p->login_next_ns - now) / 1e9);
    return -1;
  }
  int rc;
  if (p->inband && c->device[0]) {
    rc = ipmi_ctx_open_inband(p->ctx, IPMI_DEVICE_OPENIPMI, 0, 0, 0, c->device, 0, 0);
  } else if (p->inband) {
    rc = ipmi_ctx_find_inband(p->ctx, NULL, 0, 0, 0, NULL, 0, 0);
    if (rc == 0) {
      snprintf(why, whylen,
               "in band: no local IPMI interface found (no /dev/ipmi0: modprobe ipmi_devintf "
               "ipmi_si; ergd needs read-write access to it)");
      p->login_seconds = (double)(erg_time_monotonic_ns() - now) / 1e9;
      return -1;
    }
    rc = rc == 1 ? 0 : -1;
  } else {
    char host[200];
    if (c->port)
      snprintf(host, sizeof host, "%s%s%s:%d", strchr(c->host, ':') ? "[" : "", c->host,
               strchr(c->host, ':') ? "]" : "", c->port);
    else
      snprintf(host, sizeof host, "%s", c->host);
    rc = ipmi_ctx_open_outofband_2_0(p->ctx, host, c->user, p->password, NULL, 0, p->privilege,
                                     p->cipher, p->session_ms, p->retransmit_ms, 0, 0);
  }
  p->login_seconds = (double)(erg_time_monotonic_ns() - now) / 1e9;
  if (rc == 0) {
    p->open = true;
    p->login_next_ns = 0;
    return 0;
  }
  int e = ipmi_ctx_errnum(p->ctx);
  if (p->inband)
    snprintf(why, whylen, "%s: %s%s", p->where, ipmi_ctx_errormsg(p->ctx),
             e == IPMI_ERR_PERMISSION ? " (ergd needs read-write access to the device)" : "");
  else
    snprintf(why, whylen, "lanplus %s as %s, cipher suite %u: %s%s", p->where, c->user, p->cipher,
             ipmi_ctx_errormsg(p->ctx),
             e == IPMI_ERR_CONNECTION_TIMEOUT || e == IPMI_ERR_SESSION_TIMEOUT
                 ? " (no answer: the BMC is down or unreachable, or silently refuses this user "
                   "or cipher suite)"
                 : "");
  if (!p->inband && ipmi_login_refused(e)) {
    snprintf(p->login_why, sizeof p->login_why, "%s", why);
    p->login_next_ns = now + IPMI_LOGIN_BACKOFF_NS;
    snprintf(why, whylen, "%s: login refused (next try in %.0f s)", p->login_why,
             IPMI_LOGIN_BACKOFF_NS / 1e9);
  }
  return -1;
}

static void ipmi_logout(struct ipmi_priv *p) {
  if (p->open)
    ipmi_ctx_close(p->ctx);
  p->open = false;
}

static int ipmi_poll_src(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                         size_t whylen) {
  struct ipmi_priv *p = src->priv;
  for (int i = 0; i < src->cfg.nchannels; i++)
    out[i] = (struct erg_pdu_reading){.watts = NAN, .energy_joules = NAN};
  p->answered = false;
  p->request_seconds = NAN;
  p->login_seconds = NAN;
  p->bad_why[0] = '\0';
  if (!p->open && ipmi_login(src, why, whylen))
    return -1;
  uint8_t rs[64];
  uint64_t t0 = erg_time_monotonic_ns();
  int n = ipmi_cmd_raw(p->ctx, 0, ERG_DCMI_NETFN, erg_dcmi_power_request,
                       sizeof erg_dcmi_power_request, rs, sizeof rs);
  uint64_t arrival = erg_time_realtime_ns();
  p->request_seconds = (double)(erg_time_monotonic_ns() - t0) / 1e9;
  if (n < 0) {
    snprintf(why, whylen, "%s: DCMI Get Power Reading: %s", p->where, ipmi_ctx_errormsg(p->ctx));
    ipmi_logout(p); /* a timed-out session is dead: log in again next round */
    return -1;
  }
  p->answered = true;
  char what[240];
  int rc = erg_dcmi_power_decode(rs, (size_t)n, &p->last, what, sizeof what);
  if (rc != 0) {
    snprintf(why, whylen, "%s: %s", p->where, what);
    /* A number that is no reading is a bad value (said once, counted);
     * a refusal or a broken answer is the source failing. */
    if (p->last.verdict == ERG_DCMI_ZERO || p->last.verdict == ERG_DCMI_ABSURD) {
      snprintf(p->bad_why, sizeof p->bad_why, "%s", what);
      for (int i = 0; i < src->cfg.nchannels; i++)
        out[i].bad_value = true;
    }
    return -1;
  }
  if (p->last.verdict == ERG_DCMI_INACTIVE_TAKEN && !p->note_said) {
    snprintf(p->note, sizeof p->note, "%s", what);
    p->note_due = true;
  }
  for (int i = 0; i < src->cfg.nchannels; i++) {
    out[i].t_ns = arrival;
    out[i].watts = p->last.watts;
    out[i].device_time_s = p->last.bmc_time_s;
    out[i].power_source = ERG_PDU_W_MEASURED;
    out[i].ok = true;
  }
  return 0;
}

static void ipmi_close_src(struct erg_pdu_source *src) {
  struct ipmi_priv *p = src->priv;
  if (!p)
    return;
  if (p->ctx) {
    ipmi_logout(p);
    ipmi_ctx_destroy(p->ctx);
  }
  memset(p->password, 0, sizeof p->password);
  free(p);
  src->priv = NULL;
}

static int ipmi_bad_value(const struct erg_pdu_source *src, int channel, char *why, size_t whylen) {
  (void)channel;
  const struct ipmi_priv *p = src->priv;
  if (!p || !p->bad_why[0])
    return -1;
  snprintf(why, whylen, "%s", p->bad_why);
  return 0;
}

static int ipmi_note(struct erg_pdu_source *src, char *why, size_t whylen) {
  struct ipmi_priv *p = src->priv;
  if (!p || !p->note_due)
    return -1;
  p->note_due = false;
  p->note_said = true;
  snprintf(why, whylen, "%s", p->note);
  return 0;
}

const struct erg_pdu_driver erg_pdu_driver_ipmi = {.name = "ipmi",
                                                   .open = ipmi_open_src,
                                                   .poll = ipmi_poll_src,
                                                   .close = ipmi_close_src,
                                                   .bad_value = ipmi_bad_value,
                                                   .note = ipmi_note,
                                                   .check = ipmi_check};

int erg_pdu_ipmi_probe(const struct erg_pdu_source_config *c, struct erg_ipmi_probe *res, char *why,
                       size_t whylen) {
  struct erg_pdu_source src;
  memset(res, 0, sizeof *res);
  res->login_seconds = res->request_seconds = NAN;
  why[0] = '\0';
  if (erg_pdu_source_open(&src, c, why, whylen))
    return -1;
  struct ipmi_priv *p = src.priv;
  if (p->inband)
    snprintf(res->where, sizeof res->where, "%s", p->where);
  else
    snprintf(res->where, sizeof res->where,
             "lanplus %.150s as %.16s, cipher suite %u, privilege %s", p->where, c->user, p->cipher,
             p->privilege == IPMI_PRIVILEGE_LEVEL_ADMIN      ? "admin"
             : p->privilege == IPMI_PRIVILEGE_LEVEL_OPERATOR ? "operator"
                                                             : "user");
  struct erg_pdu_reading r[ERG_PDU_MAX_CHANNELS];
  char inner[320];
  int rc = ipmi_poll_src(&src, r, inner, sizeof inner);
  res->logged_in = p->open || p->answered;
  res->login_seconds = p->login_seconds;
  res->request_seconds = p->request_seconds;
  res->answered = p->answered;
  res->p = p->last;
  res->t_ns = r[0].t_ns;
  res->used = rc == 0;
  if (rc == 0 && p->note_due)
    snprintf(res->verdict, sizeof res->verdict, "%s", p->note);
  else if (rc == 0)
    snprintf(res->verdict, sizeof res->verdict,
             "the current power, measurement active; the minimum, maximum and average cover "
             "the BMC's own window and are never used");
  else
    snprintf(res->verdict, sizeof res->verdict, "%s", inner);
  if (!res->answered) {
    if (p->login_why[0]) /* the backoff is ergd's, not the probe's */
      snprintf(why, whylen, "%s: login refused", p->login_why);
    else
      snprintf(why, whylen, "%s", inner);
    erg_pdu_source_close(&src);
    return -2;
  }
  erg_pdu_source_close(&src);
  return 0;
}
