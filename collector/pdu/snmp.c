// SPDX-License-Identifier: GPL-3.0-or-later
/* SNMP PDUs (net-snmp single-session API, numeric OIDs, no MIB files).
 * Each source keeps one UDP session; a round sends one GET per source (more
 * only past SNMP_MAX_VARBINDS) for just the configured outlets, and one
 * poll() loop waits for all of them, so a dead PDU costs its own timeout and
 * nobody else's. Profiles (profiles.c) say which OIDs and scales to use. */
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/library/large_fd_set.h>

#include "erg_common.h"
#include "snmp_int.h"

/* Varbinds per request: gosnmp's MaxOids, so what snmp_exporter sends
 * too. A 24-outlet PDU's power and energy (48) fit in one GET: agents pay
 * mostly per request, not per varbind. */
#define SNMP_MAX_VARBINDS 60
#define SNMP_TICK_MS 10                          /* retransmission check granularity */
#define SNMP_DETECT_RETRY_NS (60 * ERG_NS_PER_S) /* after nothing known answered */
/* Requests in flight at once: a burst of hundreds of datagrams overflows
 * socket buffers on the way (a proxy, a shared agent, our own host) and
 * turns into timeouts; a window keeps the pipe full without that. */
#define SNMP_MAX_INFLIGHT 64
static int snmp_max_inflight = SNMP_MAX_INFLIGHT;

void erg_pdu_snmp_set_max_inflight(int n) { snmp_max_inflight = n > 0 ? n : SNMP_MAX_INFLIGHT; }

/* JOB_SPLIT: answered tooBig, its varbinds went out again in two jobs. */
enum job_state { JOB_PENDING, JOB_DONE, JOB_TIMEOUT, JOB_ERROR, JOB_SPLIT };

struct snmp_job {
  struct erg_pdu_source *src;
  size_t owner; /* index of src in the caller's array */
  bool ident, then_poll, handled, sent;
  netsnmp_pdu *req, *resp;
  enum job_state state;
  uint64_t t_ns;
  int nvars;
  unsigned char what[SNMP_MAX_VARBINDS], chan[SNMP_MAX_VARBINDS];
  char err[128];
  bool cut;    /* dropped at the round limit */
  bool toobig; /* the agent could not fit the answer */
};

static int snmp_profile_resolve(struct erg_pdu_source *src, struct snmp_priv *p, char *why,
                                size_t whylen) {
  const char *name = src->cfg.profile;
  for (int c = 0; c < ERG_PDU_MAX_CHANNELS; c++) {
    struct snmp_chan *ch = &p->ch[c];
    for (int q = 0; q <= ERG_Q_N; q++)
      ch->raw[q] = NAN, ch->si_prefix[q] = 9, ch->fix[q] = 1.0;
  }
  if (!name[0] || !strcmp(name, "auto"))
    return 0; /* by what it answers, on the first round */
  if (!strcmp(name, "generic")) {
    if (erg_snmp_profile_generic(&src->cfg, &p->generic, why, whylen))
      return -1;
    p->prof = &p->generic;
  } else if (!(p->prof = erg_snmp_profile_find(name))) {
    snprintf(why, whylen, "unknown snmp profile '%s' (see docs/pdu.md)", name);
    return -1;
  }
  snprintf(p->ident.why, sizeof p->ident.why, "profile %s set in the config", name);
  p->ident.prof = p->prof;
  p->named = true;
  erg_snmp_borrow_voltage(p);
  return 0;
}

static void snmp_close_src(struct erg_pdu_source *src);

static int snmp_open_src(struct erg_pdu_source *src, char *why, size_t whylen) {
  erg_snmp_lib_init();
  struct snmp_priv *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  src->priv = p;
  if (snmp_profile_resolve(src, p, why, whylen) || erg_snmp_session_open(src, p, why, whylen)) {
    snmp_close_src(src);
    return -1;
  }
  return 0;
}

static void snmp_close_src(struct erg_pdu_source *src) {
  struct snmp_priv *p = src->priv;
  if (!p)
    return;
  if (p->sess)
    snmp_sess_close(p->sess);
  erg_snmp_names_free(&p->names);
  free(p);
  src->priv = NULL;
}

/* ---- the concurrent GET engine ---- */

static const char *snmp_report_name(const netsnmp_pdu *pdu) {
  static const char *const names[] = {"?",
                                      "unsupported security level",
                                      "not in time window",
                                      "unknown user name",
                                      "unknown engine ID",
                                      "wrong digest (auth password or protocol)",
                                      "decryption error (priv password or protocol)"};
  static const oid usm_stats[] = {1, 3, 6, 1, 6, 3, 15, 1, 1};
  const netsnmp_variable_list *v = pdu->variables;
  if (v && v->name_length >= 10 && !memcmp(v->name, usm_stats, sizeof usm_stats) &&
      v->name[9] >= 1 && v->name[9] <= 6)
    return names[v->name[9]];
  return "report";
}

static int snmp_job_cb(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu, void *magic) {
  (void)reqid;
  struct snmp_job *j = magic;
  if (op == NETSNMP_CALLBACK_OP_RESEND || op == NETSNMP_CALLBACK_OP_CONNECT)
    return 1; /* a retry went out: still pending */
  j->t_ns = erg_time_realtime_ns();
  if (op == NETSNMP_CALLBACK_OP_TIMED_OUT) {
    j->state = JOB_TIMEOUT;
  } else if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE) {
    int e = sess ? sess->s_snmp_errno : 0; /* e.g. an SNMPv3 auth failure */
    j->state = JOB_ERROR;
    snprintf(j->err, sizeof j->err, "%s",
             op == NETSNMP_CALLBACK_OP_SEC_ERROR ? "SNMPv3 security error (user, passphrases or "
                                                   "protocols do not match the agent)"
             : e                                 ? snmp_api_errstring(e)
                                                 : "unreachable (nothing answers SNMP there)");
  } else if (pdu->command == SNMP_MSG_REPORT) {
    j->state = JOB_ERROR;
    snprintf(j->err, sizeof j->err, "SNMPv3: %s", snmp_report_name(pdu));
  } else if (pdu->errstat == SNMP_ERR_TOOBIG) {
    j->state = JOB_ERROR; /* snmp_followups splits it */
    j->toobig = true;
    snprintf(j->err, sizeof j->err, "agent said tooBig for %d varbinds", j->nvars);
  } else if (pdu->errstat != SNMP_ERR_NOERROR) {
    j->state = JOB_ERROR;
    snprintf(j->err, sizeof j->err, "agent said %s (varbind %ld)", snmp_errstring(pdu->errstat),
             pdu->errindex);
  } else {
    j->resp = snmp_clone_pdu(pdu);
    j->state = j->resp ? JOB_DONE : JOB_ERROR;
  }
  return 1;
}

static void snmp_job_send(struct snmp_job *j) {
  struct snmp_priv *p = j->src->priv;
  j->state = JOB_PENDING;
  j->sent = true;
  p->tried = true;
  if (!j->req) {
    j->state = JOB_ERROR;
    snprintf(j->err, sizeof j->err, "no request to send");
    return;
  }
  char why[160];
  if (!p->sess) /* dropped after a cut round (snmp_cut) and not reopened yet */
    erg_snmp_session_open(j->src, p, why, sizeof why);
  if (!p->sess) {
    snmp_free_pdu(j->req);
    j->req = NULL;
    j->state = JOB_ERROR;
    snprintf(j->err, sizeof j->err, "no session: %.100s", why);
    return;
  }
  if (!snmp_sess_async_send(p->sess, j->req, snmp_job_cb, j)) {
    char *err = NULL;
    int liberr, syserr;
    snmp_sess_error(p->sess, &liberr, &syserr, &err);
    snprintf(j->err, sizeof j->err, "send: %s", err ? err : "failed");
    free(err);
    snmp_free_pdu(j->req);
    j->state = JOB_ERROR;
  }
  j->req = NULL; /* owned by the library once sent */
}

static size_t snmp_jobs_pending(struct snmp_job *jobs, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += jobs[i].state == JOB_PENDING;
  return k;
}

/* Reads every session that poll() found readable; jobs of one source are
 * adjacent, so a session is read once per wakeup. */
static void snmp_read_ready(struct snmp_job *jobs, struct pollfd *fds, void **sess, size_t m) {
  for (size_t i = 0; i < m; i++) {
    if (!(fds[i].revents & (POLLIN | POLLERR)))
      continue;
    netsnmp_large_fd_set lfds;
    netsnmp_large_fd_set_init(&lfds, fds[i].fd + 1);
    NETSNMP_LARGE_FD_ZERO(&lfds);
    NETSNMP_LARGE_FD_SET(fds[i].fd, &lfds);
    snmp_sess_read2(sess[i], &lfds);
    netsnmp_large_fd_set_cleanup(&lfds);
  }
  (void)jobs;
}

static size_t snmp_collect_fds(struct snmp_job *jobs, size_t n, struct pollfd *fds, void **sess) {
  static __thread unsigned gen;
  size_t m = 0;
  gen++;
  for (size_t i = 0; i < n; i++) {
    struct snmp_priv *p = jobs[i].src->priv;
    if (jobs[i].state != JOB_PENDING || !jobs[i].sent || p->mark == gen)
      continue; /* each session once: a second read would block */
    p->mark = gen;
    netsnmp_transport *t = snmp_sess_transport(p->sess);
    fds[m].fd = t ? t->sock : -1;
    fds[m].events = POLLIN;
    fds[m].revents = 0;
    sess[m++] = p->sess;
  }
  return m;
}

static void snmp_ident_apply(struct erg_pdu_source *src, const netsnmp_pdu *resp);
static size_t snmp_build_jobs(struct erg_pdu_source *src, struct snmp_job *jobs);
static size_t snmp_jobs_needed(const struct erg_pdu_source *src);
static size_t snmp_pack_jobs(struct erg_pdu_source *src, const unsigned char *what,
                             const unsigned char *chan, int n, int lim, struct snmp_job *jobs,
                             size_t owner);

/* Varbinds per GET for this source: SNMP_MAX_VARBINDS until the agent said
 * tooBig. */
static int snmp_vars_limit(const struct snmp_priv *p) {
  return p->max_vars > 0 && p->max_vars < SNMP_MAX_VARBINDS ? p->max_vars : SNMP_MAX_VARBINDS;
}

static uint64_t snmp_deadline(const struct erg_pdu_source *src) {
  const struct snmp_priv *p = src->priv;
  return erg_time_monotonic_ns() + (uint64_t)((p->budget_s + 1.0) * 1e9);
}

/* An agent whose answer would not fit its buffer says tooBig (small PDUs,
 * old firmware). The source then asks for half as many varbinds per GET
 * from now on, and the job goes out again at once as two (one split per
 * job and round: the jobs array has that much room; the next round starts
 * from the smaller size and may halve it again). */
static void snmp_split_toobig(struct snmp_job *j, struct snmp_job *jobs, size_t *n, size_t cap) {
  struct snmp_priv *p = j->src->priv;
  int half = (j->nvars + 1) / 2;
  if (j->nvars > 1 && half < snmp_vars_limit(p))
    p->max_vars = half;
  if (j->nvars > 1 && *n + 2 <= cap) {
    *n += snmp_pack_jobs(j->src, j->what, j->chan, j->nvars, half, jobs + *n, j->owner);
    j->state = JOB_SPLIT;
  }
}

/* A source identified during the loop gets its poll GETs sent at once, so
 * a slow sysObjectID answer elsewhere never holds it back. */
static void snmp_followups(struct snmp_job *jobs, size_t *n, size_t cap, uint64_t *deadline) {
  size_t n0 = *n;
  for (size_t i = 0; i < n0; i++) {
    struct snmp_job *j = &jobs[i];
    if (j->handled || j->state == JOB_PENDING)
      continue;
    if (j->toobig) {
      j->handled = true;
      snmp_split_toobig(j, jobs, n, cap);
      continue;
    }
    if (!j->ident)
      continue;
    j->handled = true;
    if (j->state != JOB_DONE)
      continue;
    snmp_ident_apply(j->src, j->resp);
    struct snmp_priv *p = j->src->priv;
    if (!j->then_poll || !erg_snmp_ready(p) || *n + snmp_jobs_needed(j->src) > cap)
      continue;
    size_t k = snmp_build_jobs(j->src, jobs + *n);
    for (size_t q = 0; q < k; q++)
      jobs[*n + q].owner = j->owner; /* sent by snmp_send_more */
    *n += k;
  }
  (void)deadline;
}

/* Keeps up to snmp_max_inflight requests outstanding, in job order. */
static void snmp_send_more(struct snmp_job *jobs, size_t n, uint64_t *deadline) {
  size_t inflight = 0;
  for (size_t i = 0; i < n; i++)
    inflight += jobs[i].sent && jobs[i].state == JOB_PENDING;
  for (size_t i = 0; i < n && inflight < (size_t)snmp_max_inflight; i++) {
    if (jobs[i].sent || jobs[i].state != JOB_PENDING)
      continue;
    snmp_job_send(&jobs[i]);
    inflight += jobs[i].state == JOB_PENDING;
    uint64_t d = snmp_deadline(jobs[i].src);
    if (d > *deadline)
      *deadline = d;
  }
}

/* Past the round limit: net-snmp has no per-request cancel, so the
 * sessions with requests still out are closed and reopened. That happens
 * while the jobs the callbacks point to are alive; the dropped requests can
 * then never call back into freed memory. */
static void snmp_cut(struct snmp_job *jobs, size_t n, bool limit_hit) {
  for (size_t i = 0; i < n; i++) {
    struct snmp_priv *p = jobs[i].src->priv;
    if (jobs[i].state != JOB_PENDING)
      continue;
    if (jobs[i].sent && p->sess) {
      snmp_sess_close(p->sess);
      p->sess = NULL;
    }
    jobs[i].state = JOB_TIMEOUT;
    jobs[i].cut = limit_hit;
  }
  for (size_t i = 0; i < n; i++) {
    struct snmp_priv *p = jobs[i].src->priv;
    char why[160];
    if (jobs[i].state == JOB_TIMEOUT && !p->sess)
      erg_snmp_session_open(jobs[i].src, p, why, sizeof why);
  }
}

/* Sends every job, then services replies, retransmissions and follow-ups
 * until all are answered or timed out, or until limit_ns (monotonic, 0 =
 * none). The library does the retries per session; jobs has room for cap
 * entries (follow-ups are appended). */
static void snmp_run(struct snmp_job *jobs, size_t *n, size_t cap, uint64_t limit_ns) {
  uint64_t deadline = 0;
  snmp_send_more(jobs, *n, &deadline);
  struct pollfd *fds = calloc(cap ? cap : 1, sizeof *fds);
  void **sess = calloc(cap ? cap : 1, sizeof *sess);
  while (fds && sess && snmp_jobs_pending(jobs, *n)) {
    size_t m = snmp_collect_fds(jobs, *n, fds, sess);
    if (poll(fds, m, SNMP_TICK_MS) > 0)
      snmp_read_ready(jobs, fds, sess, m);
    for (size_t i = 0; i < m; i++)
      snmp_sess_timeout(sess[i]);
    snmp_followups(jobs, n, cap, &deadline);
    snmp_send_more(jobs, *n, &deadline);
    uint64_t now = erg_time_monotonic_ns();
    if (now > deadline || (limit_ns && now >= limit_ns))
      break; /* deadline: a safety net, the library should have timed them out */
  }
  snmp_cut(jobs, *n, limit_ns && erg_time_monotonic_ns() >= limit_ns);
  snmp_followups(jobs, n, *n, &deadline); /* apply late identifications */
  free(fds);
  free(sess);
}

static int snmp_job_add(struct snmp_job *j, const char *oidstr, enum vb_what what, int chan) {
  oid o[MAX_OID_LEN];
  size_t len;
  if (j->nvars >= SNMP_MAX_VARBINDS || erg_snmp_oid_parse(oidstr, o, &len))
    return -1;
  if (!j->req && !(j->req = snmp_pdu_create(SNMP_MSG_GET)))
    return -1;
  snmp_add_null_var(j->req, o, len);
  j->what[j->nvars] = (unsigned char)what;
  j->chan[j->nvars++] = (unsigned char)chan;
  return 0;
}

static void snmp_job_free(struct snmp_job *j) {
  if (j->req)
    snmp_free_pdu(j->req);
  if (j->resp)
    snmp_free_pdu(j->resp);
  j->req = j->resp = NULL;
}

static void snmp_job_why(const struct snmp_job *j, char *why, size_t whylen) {
  struct snmp_priv *p = j->src->priv;
  if (j->cut && j->sent)
    snprintf(why, whylen, "%s (%s): no answer within the round limit (polling period)",
             j->src->cfg.host, p->peer);
  else if (j->cut)
    snprintf(why, whylen, "%s (%s): not sent within the round limit (too many PDUs in flight)",
             j->src->cfg.host, p->peer);
  else if (j->state == JOB_TIMEOUT)
    snprintf(why, whylen, "%s (%s): no answer within %.3g s (timeout %.3g s, %d retries)",
             j->src->cfg.host, p->peer, p->budget_s,
             j->src->cfg.timeout_seconds > 0 ? j->src->cfg.timeout_seconds : 1.0,
             j->src->cfg.retries > 0 ? j->src->cfg.retries : 0);
  else
    snprintf(why, whylen, "%s (%s): %s", j->src->cfg.host, p->peer, j->err);
}

const struct erg_snmp_profile *erg_snmp_source_profile(const struct erg_pdu_source *src) {
  const struct snmp_priv *p = src->priv;
  return p ? p->prof : NULL;
}

/* ---- identification (sysObjectID -> profile) ---- */

static const char *const oid_sysdescr = "1.3.6.1.2.1.1.1.0";
static const char *const oid_sysobjectid = "1.3.6.1.2.1.1.2.0";

/* sysDescr and sysObjectID; then, unless the config named it, the profile
 * by what the agent answers (blocking GETNEXTs on this source's session,
 * once in its life: snmp_detect.c), and a named-variable table's rows
 * (snmp_names.c; again when its stamp moved). */
static void snmp_ident_apply(struct erg_pdu_source *src, const netsnmp_pdu *resp) {
  struct snmp_priv *p = src->priv;
  const netsnmp_variable_list *v = resp->variables;
  if (v) {
    erg_snmp_vb_string(v, p->ident.sysdescr, sizeof p->ident.sysdescr);
    v = v->next_variable;
  }
  if (v && v->type == ASN_OBJECT_ID)
    erg_snmp_oid_format(v->val.objid, v->val_len / sizeof(oid), p->ident.sysoid,
                        sizeof p->ident.sysoid);
  if (p->prof) {
    erg_snmp_names_ensure(src, p->detect_why, sizeof p->detect_why);
    erg_snmp_borrow_voltage(p);
    erg_snmp_wild_apply(src, p);
    erg_snmp_fw_apply(p);
    return;
  }
  /* Nothing known answers: try again a minute later, not every round
   * (each try is a dozen blocking GETNEXTs in the one SNMP thread). */
  if (erg_snmp_detect(src, p, p->detect_why, sizeof p->detect_why) == -2)
    p->detect_next_ns = erg_time_monotonic_ns() + SNMP_DETECT_RETRY_NS;
  erg_snmp_wild_apply(src, p);
  erg_snmp_fw_apply(p);
}

static void snmp_ident_job(struct snmp_job *j, struct erg_pdu_source *src, size_t owner) {
  j->src = src;
  j->owner = owner;
  j->ident = j->then_poll = true;
  snmp_job_add(j, oid_sysdescr, VB_OTHER, 0);
  snmp_job_add(j, oid_sysobjectid, VB_OTHER, 0);
}

/* After the run: a failed or unmatched identification fails its source. */
static void snmp_ident_result(const struct snmp_job *j, int *rc, char *why, size_t whylen) {
  const struct snmp_priv *p = j->src->priv;
  if (j->state != JOB_DONE) {
    *rc = -1;
    if (why)
      snmp_job_why(j, why, whylen);
  } else if (!erg_snmp_ready(p)) {
    *rc = -1;
    if (why)
      snprintf(why, whylen, "%s", p->detect_why);
  }
}

/* ---- polling ---- */

/* The OID of varbind (what, chan) of src; -1 if none. */
static int snmp_vb_oid(const struct erg_pdu_source *src, int what, int chan, char *o, size_t olen) {
  const struct snmp_priv *p = src->priv;
  int q = what & 15, kind = what & ~15;
  if (what == VB_STAMP)
    return (size_t)snprintf(o, olen, "%s", erg_snmp_names_stamp_oid(p)) >= olen ? -1 : 0;
  /* The borrowed voltage is inlet, phase or device 1, whatever the channel. */
  int n = q == ERG_Q_N ? 1 : src->cfg.channels[chan];
  return erg_snmp_chan_oid(p, &src->cfg, chan, q,
                           kind == VB_VALUE    ? 0
                           : kind == VB_DIGITS ? 1
                                               : 2,
                           n, o, olen);
}

/* Packs varbinds (what[i], chan[i]) into jobs of at most lim varbinds;
 * returns the number of jobs used. */
static size_t snmp_pack_jobs(struct erg_pdu_source *src, const unsigned char *what,
                             const unsigned char *chan, int n, int lim, struct snmp_job *jobs,
                             size_t owner) {
  size_t nj = 0;
  char o[ERG_SNMP_OID_MAX];
  for (int i = 0; i < n; i++) {
    if (snmp_vb_oid(src, what[i], chan[i], o, sizeof o))
      continue;
    if (!nj || jobs[nj - 1].nvars >= lim)
      jobs[nj++] = (struct snmp_job){.src = src, .owner = owner};
    snmp_job_add(&jobs[nj - 1], o, what[i], chan[i]);
  }
  return nj;
}

/* The quantities channel c asks for: power and energy; where the level
 * has no active power column, or it did not answer, or the probe wants
 * everything, also VA, PF, current and voltage (own or borrowed). */
static unsigned snmp_chan_wants(const struct erg_pdu_source *src, int c) {
  const struct snmp_priv *p = src->priv;
  unsigned m = 1u << ERG_Q_POWER | 1u << ERG_Q_ENERGY;
  if (p->want_all || p->ch[c].fallback || !erg_snmp_chan_col(p, &src->cfg, c, ERG_Q_POWER))
    m |=
        1u << ERG_Q_VA | 1u << ERG_Q_PF | 1u << ERG_Q_CURRENT | 1u << ERG_Q_VOLTAGE | 1u << ERG_Q_N;
  return m;
}

#define SNMP_VB_PER_CHAN (3 * (ERG_Q_N + 1))

/* Appends the GETs of one source to jobs (several past the varbind limit);
 * returns the number of jobs used. */
static size_t snmp_build_jobs(struct erg_pdu_source *src, struct snmp_job *jobs) {
  struct snmp_priv *p = src->priv;
  static __thread unsigned char what[SNMP_VB_PER_CHAN * ERG_PDU_MAX_CHANNELS + 1],
      chan[SNMP_VB_PER_CHAN * ERG_PDU_MAX_CHANNELS + 1];
  int n = 0;
  for (int q = ERG_Q_POWER; q <= ERG_Q_N; q++) /* column by column: agents look up in order */
    for (int c = 0; c < src->cfg.nchannels; c++)
      if (snmp_chan_wants(src, c) & 1u << q) {
        what[n] = (unsigned char)(VB_VALUE | q);
        chan[n++] = (unsigned char)c;
      }
  /* Scale factors (Raritan's digits, ENTITY-SENSOR's scale) once a channel. */
  for (int c = 0; c < src->cfg.nchannels; c++) {
    if (p->ch[c].have_scale)
      continue;
    unsigned m = snmp_chan_wants(src, c);
    for (int q = ERG_Q_POWER; q <= ERG_Q_N; q++)
      if (m & 1u << q)
        for (int k = VB_DIGITS; k <= VB_SI; k += 16) {
          what[n] = (unsigned char)(k | q);
          chan[n++] = (unsigned char)c;
        }
  }
  if (erg_snmp_names_stamp_oid(p)) { /* last: read after the values it vouches for */
    what[n] = VB_STAMP;
    chan[n++] = 0;
  }
  return snmp_pack_jobs(src, what, chan, n, snmp_vars_limit(p), jobs, 0);
}

/* Jobs for one round, and room for each to split once on tooBig. */
static size_t snmp_jobs_needed(const struct erg_pdu_source *src) {
  size_t per = (size_t)snmp_vars_limit(src->priv);
  return 3 * ((size_t)(SNMP_VB_PER_CHAN * src->cfg.nchannels) / per + 1);
}

static void snmp_reset_out(const struct erg_pdu_source *src, struct erg_pdu_reading *out) {
  for (int c = 0; c < src->cfg.nchannels; c++)
    out[c] = (struct erg_pdu_reading){.watts = NAN, .energy_joules = NAN, .ok = false};
}

int erg_pdu_snmp_poll_many_within(struct erg_pdu_source **srcs, size_t n,
                                  struct erg_pdu_reading **out, int *rc, char *whys, size_t whylen,
                                  double max_seconds) {
  uint64_t limit = max_seconds > 0 ? erg_time_monotonic_ns() + (uint64_t)(max_seconds * 1e9) : 0;
  int *rcs = rc ? rc : calloc(n ? n : 1, sizeof *rcs);
  size_t cap = 0, nj = 0;
  for (size_t i = 0; i < n; i++) {
    bool mine = srcs[i]->driver == &erg_pdu_driver_snmp && srcs[i]->priv;
    rcs[i] = mine ? 0 : -1;
    if (whys)
      whys[i * whylen] = '\0';
    if (mine) {
      snmp_reset_out(srcs[i], out[i]);
      erg_snmp_forget(srcs[i]);
      ((struct snmp_priv *)srcs[i]->priv)->tried = false;
    } else if (whys)
      snprintf(whys + i * whylen, whylen, "%s: not an open SNMP source", srcs[i]->cfg.host);
    if (!mine)
      continue;
    cap += snmp_jobs_needed(srcs[i]) + 1;
  }
  struct snmp_job *jobs = calloc(cap ? cap : 1, sizeof *jobs);
  /* Healthy PDUs first, those that failed last round after them: within the
   * in-flight window a dead PDU then only ever waits behind other dead ones. */
  /* Within each pass the start rotates from round to round: when a round
   * limit cuts the window short, a different set misses out each time
   * rather than always the same last PDUs. */
  static __thread unsigned rotation;
  size_t start = n ? rotation++ % n : 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t r = 0; jobs && r < n; r++) {
      size_t i = (start + r) % n;
      struct snmp_priv *p = srcs[i]->priv;
      if (rcs[i] || p->failed_last != (pass == 1))
        continue;
      if (!p->prof && p->detect_next_ns > erg_time_monotonic_ns()) {
        rcs[i] = -1; /* known to match nothing until detect_next_ns */
        if (whys)
          snprintf(whys + i * whylen, whylen, "%s (next try within a minute)", p->detect_why);
        continue;
      }
      if (!erg_snmp_ready(p)) { /* identify first; the poll follows in the same loop */
        snmp_ident_job(&jobs[nj++], srcs[i], i);
        continue;
      }
      size_t k = snmp_build_jobs(srcs[i], jobs + nj);
      for (size_t q = 0; q < k; q++)
        jobs[nj + q].owner = i;
      nj += k;
    }
  snmp_run(jobs, &nj, cap, limit);
  for (size_t q = 0; q < nj; q++) {
    size_t i = jobs[q].owner;
    char *why = whys ? whys + i * whylen : NULL;
    if (jobs[q].ident) {
      snmp_ident_result(&jobs[q], &rcs[i], why, whylen);
    } else if (jobs[q].state == JOB_DONE) {
      erg_snmp_apply_values(srcs[i], jobs[q].resp->variables, jobs[q].what, jobs[q].chan,
                            jobs[q].nvars, jobs[q].t_ns);
    } else if (why && jobs[q].state != JOB_SPLIT) {
      snmp_job_why(&jobs[q], why, whylen);
    }
    snmp_job_free(&jobs[q]);
  }
  int good = 0;
  for (size_t i = 0; i < n; i++) {
    bool any = false;
    for (int c = 0; !rcs[i] && c < srcs[i]->cfg.nchannels; c++)
      erg_snmp_chan_reading(srcs[i], c, &out[i][c]);
    if (!rcs[i])
      erg_snmp_cross_check(srcs[i], out[i]);
    for (int c = 0; !rcs[i] && c < srcs[i]->cfg.nchannels; c++)
      any |= out[i][c].ok;
    if (!rcs[i] && !any) {
      rcs[i] = -1;
      if (whys && !whys[i * whylen])
        erg_snmp_no_value_why(srcs[i], whys + i * whylen, whylen);
    }
    good += rcs[i] == 0;
    struct snmp_priv *p = srcs[i]->driver == &erg_pdu_driver_snmp ? srcs[i]->priv : NULL;
    if (p && p->tried) /* never sent (round limit): not known to be failing */
      p->failed_last = rcs[i] != 0;
  }
  free(jobs);
  if (!rc)
    free(rcs);
  return good;
}

int erg_pdu_snmp_poll_many(struct erg_pdu_source **srcs, size_t n, struct erg_pdu_reading **out,
                           int *rc, char *whys, size_t whylen) {
  return erg_pdu_snmp_poll_many_within(srcs, n, out, rc, whys, whylen, 0);
}

/* One source, blocking (probe, tests). A round that taught the source a
 * smaller GET size (tooBig) is tried again at once, a few times: a one-off
 * caller has no next round to wait for. */
static int snmp_poll_src(struct erg_pdu_source *src, struct erg_pdu_reading *out, char *why,
                         size_t whylen) {
  int rc = 0;
  for (int tries = 0; tries < 6; tries++) {
    const struct snmp_priv *p = src->priv;
    int lim = p ? snmp_vars_limit(p) : 0;
    why[0] = '\0';
    erg_pdu_snmp_poll_many(&src, 1, &out, &rc, why, whylen);
    if (rc == 0 || !p || snmp_vars_limit(p) == lim)
      break;
  }
  return rc;
}

/* ---- probe helpers ---- */

int erg_pdu_snmp_identify(struct erg_pdu_source *src, struct erg_snmp_ident *id, char *why,
                          size_t whylen) {
  struct snmp_priv *p = src->priv;
  int rc = 0;
  struct snmp_job j = {0};
  size_t one = 1;
  why[0] = '\0';
  snmp_ident_job(&j, src, 0);
  j.then_poll = false;
  snmp_run(&j, &one, 1, 0);
  snmp_ident_result(&j, &rc, why, whylen);
  snmp_job_free(&j);
  if (rc)
    return -1;
  snprintf(p->ident.model, sizeof p->ident.model, "%.*s", 100, p->ident.sysdescr);
  const char *mo = p->prof->oid_model;
  char model[128];
  bool present;
  double v;
  if (mo && erg_snmp_get(src, &mo, 1, &present, &v, model, sizeof model, why, whylen) == 0 &&
      model[0])
    snprintf(p->ident.model, sizeof p->ident.model, "%s", model);
  *id = p->ident;
  return 0;
}

const struct erg_pdu_driver erg_pdu_driver_snmp = {.name = "snmp",
                                                   .open = snmp_open_src,
                                                   .poll = snmp_poll_src,
                                                   .close = snmp_close_src,
                                                   .wrap_joules = erg_snmp_wrap_joules,
                                                   .bad_value = erg_snmp_bad_value,
                                                   .note = erg_snmp_note};
