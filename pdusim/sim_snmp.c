// SPDX-License-Identifier: GPL-3.0-or-later
/* The simulator's SNMP agent: node N is outlet N of an rPDU2-shaped PDU
 * (PowerNet-MIB rPDU2OutletMeteredStatusTable 1.3.6.1.4.1.318.1.1.26.9.4.3.1:
 * .1 index, .3 name, .4 number, .7 power W, .11 energy 0.1 kWh, plus the
 * device power/energy and outlet count, device = the sum of the outlets).
 * --sum channel K is phase K (rPDU2PhaseStatusTable ...26.6.3.1: .1 index,
 * .3 number, .5 current 0.1 A, .6 voltage V, .7 power 0.01 kW, .8 VA
 * 0.01 kVA, .9 PF 0.01; SIM_VOLTS, PF 1): the level of erg's apc-rpdu2
 * profile below the device that has power (its banks have current only,
 * and no level below the device has energy in rPDU2). It answers GET,
 * GETNEXT and GETBULK (one repetition) for v1/v2c, any community, built on
 * net-snmp's server-side session API so no snmpd is needed. sysDescr says
 * SIMULATED. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include "erg_common.h"
#include "sim_snmp.h"

#define ROW_OID_MAX 20
#define SIM_ROWS (8 + 7 * SIM_MAX_NODES) /* system, device, 7 columns per phase or 5 per outlet */
#define SIM_VOLTS 230.0                  /* a phase's voltage; PF 1: VA = W */

struct sim_row {
  oid name[ROW_OID_MAX];
  size_t len;
  u_char type;
  long ival;
  char sval[96];
  oid oval[ROW_OID_MAX];
  size_t olen;
};

struct sim_snmp {
  struct sim *s;
  void *ss;
  struct sim_row rows[SIM_ROWS];
  int nrows;
  uint64_t start_ns;
};

static const oid sys_oid[] = {1, 3, 6, 1, 2, 1, 1};
static const oid rpdu2[] = {1, 3, 6, 1, 4, 1, 318, 1, 1, 26};
static const oid rpdu2_sysoid[] = {1, 3, 6, 1, 4, 1, 318, 1, 3, 4, 6};

static struct sim_row *row_add(struct sim_snmp *st, const oid *base, size_t blen, const oid *tail,
                               size_t tlen, u_char type) {
  struct sim_row *r = &st->rows[st->nrows++];
  memset(r, 0, sizeof *r);
  memcpy(r->name, base, blen * sizeof(oid));
  memcpy(r->name + blen, tail, tlen * sizeof(oid));
  r->len = blen + tlen;
  r->type = type;
  return r;
}

/* Rows are added in lexicographic OID order, which GETNEXT relies on. */
static void sim_rows_build(struct sim_snmp *st) {
  struct sim *s = st->s;
  st->nrows = 0;
  struct sim_row *r = row_add(st, sys_oid, 7, (oid[]){1, 0}, 2, ASN_OCTET_STR);
  snprintf(r->sval, sizeof r->sval, "erg-pdusim SIMULATED rPDU2 (not real hardware)");
  r = row_add(st, sys_oid, 7, (oid[]){2, 0}, 2, ASN_OBJECT_ID);
  memcpy(r->oval, rpdu2_sysoid, sizeof rpdu2_sysoid);
  r->olen = sizeof rpdu2_sysoid / sizeof(oid);
  r = row_add(st, sys_oid, 7, (oid[]){3, 0}, 2, ASN_TIMETICKS);
  r->ival = (long)((erg_time_monotonic_ns() - st->start_ns) / 10000000ULL);
  r = row_add(st, sys_oid, 7, (oid[]){5, 0}, 2, ASN_OCTET_STR);
  snprintf(r->sval, sizeof r->sval, "erg-pdusim");
  double w = 0, j = 0;
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < s->nnodes; i++)
    w += s->nodes[i].watts, j += s->nodes[i].energy_joules;
  row_add(st, rpdu2, 10, (oid[]){4, 2, 1, 6, 1}, 5, ASN_INTEGER)->ival = s->nnodes;
  if (s->nsums) /* without sums no phase table, as before */
    row_add(st, rpdu2, 10, (oid[]){4, 2, 1, 7, 1}, 5, ASN_INTEGER)->ival = s->nsums;
  row_add(st, rpdu2, 10, (oid[]){4, 3, 1, 5, 1}, 5, ASN_INTEGER)->ival = lround(w / 10.0);
  row_add(st, rpdu2, 10, (oid[]){4, 3, 1, 9, 1}, 5, ASN_INTEGER)->ival = (long)(j / 360e3);
  static const oid pcols[] = {1, 3, 5, 6, 7, 8, 9};
  for (size_t c = 0; c < sizeof pcols / sizeof pcols[0]; c++)
    for (int k = 0; k < s->nsums; k++) {
      double pw = s->nodes[s->nnodes + k].watts;
      long v[10] = {[1] = k + 1,
                    [3] = k + 1,
                    [5] = lround(pw / SIM_VOLTS * 10),
                    [6] = lround(SIM_VOLTS),
                    [7] = lround(pw / 10.0),
                    [8] = lround(pw / 10.0),
                    [9] = 100};
      oid tail[] = {6, 3, 1, pcols[c], (oid)(k + 1)};
      row_add(st, rpdu2, 10, tail, 5, ASN_INTEGER)->ival = v[pcols[c]];
    }
  static const oid cols[] = {1, 3, 4, 7, 11};
  for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
    for (int i = 0; i < s->nnodes; i++) {
      oid tail[] = {9, 4, 3, 1, cols[c], (oid)(i + 1)};
      r = row_add(st, rpdu2, 10, tail, 6, cols[c] == 3 ? ASN_OCTET_STR : ASN_INTEGER);
      const struct sim_node *n = &s->nodes[i];
      if (cols[c] == 3)
        snprintf(r->sval, sizeof r->sval, "%s", n->name);
      else
        r->ival = cols[c] == 7    ? lround(n->watts)
                  : cols[c] == 11 ? (long)(n->energy_joules / 360e3)
                                  : i + 1;
    }
  pthread_mutex_unlock(&s->lock);
}

static void sim_var_set(netsnmp_variable_list *v, const struct sim_row *r) {
  if (r->type == ASN_OCTET_STR)
    snmp_set_var_typed_value(v, r->type, r->sval, strlen(r->sval));
  else if (r->type == ASN_OBJECT_ID)
    snmp_set_var_typed_value(v, r->type, r->oval, r->olen * sizeof(oid));
  else
    snmp_set_var_typed_value(v, r->type, &r->ival, sizeof r->ival);
}

static int sim_lookup(void *ctx, netsnmp_variable_list *v, bool next, bool v1) {
  (void)v1; /* no Counter64 here */
  const struct sim_snmp *st = ctx;
  for (int i = 0; i < st->nrows; i++) {
    const struct sim_row *r = &st->rows[i];
    int c = snmp_oid_compare(r->name, r->len, v->name, v->name_length);
    if (next ? c > 0 : c == 0) {
      if (next)
        snmp_set_var_objid(v, r->name, r->len);
      sim_var_set(v, r);
      return 0;
    }
  }
  return -1;
}

netsnmp_pdu *sim_snmp_response(netsnmp_pdu *pdu) {
  netsnmp_pdu *resp = snmp_clone_pdu(pdu);
  if (resp) {
    resp->command = SNMP_MSG_RESPONSE;
    resp->errstat = resp->errindex = 0;
  }
  return resp;
}

void sim_snmp_send(void *ss, netsnmp_pdu *resp) {
  if (resp && !snmp_sess_send(ss, resp))
    snmp_free_pdu(resp);
}

void sim_snmp_reply(void *ss, netsnmp_pdu *pdu, bool next, sim_snmp_lookup_fn lookup, void *ctx) {
  bool v1 = pdu->version == SNMP_VERSION_1;
  netsnmp_pdu *resp = sim_snmp_response(pdu);
  if (!resp)
    return;
  long idx = 1;
  for (netsnmp_variable_list *v = resp->variables; v; v = v->next_variable, idx++) {
    if (!lookup(ctx, v, next, v1))
      continue;
    if (v1) { /* v1: the original varbinds come back with the error */
      snmp_free_pdu(resp);
      if ((resp = sim_snmp_response(pdu))) {
        resp->errstat = SNMP_ERR_NOSUCHNAME;
        resp->errindex = idx;
      }
      break;
    }
    snmp_set_var_typed_value(v, next ? SNMP_ENDOFMIBVIEW : SNMP_NOSUCHINSTANCE, NULL, 0);
  }
  sim_snmp_send(ss, resp);
}

static int sim_snmp_cb(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu, void *magic) {
  (void)sess;
  (void)reqid;
  struct sim_snmp *st = magic;
  if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE || pdu->version == SNMP_VERSION_3)
    return 1;
  bool next = pdu->command == SNMP_MSG_GETNEXT || pdu->command == SNMP_MSG_GETBULK;
  if (!next && pdu->command != SNMP_MSG_GET)
    return 1;
  sim_rows_build(st);
  /* A small agent (old firmware): an answer too big for its buffer. */
  size_t nvars = 0;
  for (netsnmp_variable_list *v = pdu->variables; v; v = v->next_variable)
    nvars++;
  if (st->s->snmp_max_varbinds > 0 && nvars > (size_t)st->s->snmp_max_varbinds) {
    netsnmp_pdu *resp = sim_snmp_response(pdu);
    if (resp)
      resp->errstat = SNMP_ERR_TOOBIG;
    sim_snmp_send(st->ss, resp);
    return 1;
  }
  sim_snmp_reply(st->ss, pdu, next, sim_lookup, st);
  return 1;
}

static pthread_once_t sim_snmp_once = PTHREAD_ONCE_INIT;

static void sim_snmp_lib_init(void) {
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
  netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
  setenv("MIBS", "", 1); /* numeric OIDs only: skip the MIB directory */
  snmp_disable_log();
  netsnmp_register_loghandler(NETSNMP_LOGHANDLER_NONE, LOG_DEBUG);
  init_snmp("erg-pdusim");
}

void *sim_snmp_listen(const char *host, int port, netsnmp_callback cb, void *magic) {
  char ep[192];
  pthread_once(&sim_snmp_once, sim_snmp_lib_init);
  snprintf(ep, sizeof ep, strchr(host, ':') ? "udp6:[%s]:%d" : "udp:%s:%d", host, port);
  netsnmp_transport *t = netsnmp_transport_open_server("erg-pdusim", ep);
  if (!t) {
    erg_err("snmp: cannot listen on %s", ep);
    return NULL;
  }
  netsnmp_session sess;
  snmp_sess_init(&sess);
  sess.peername = SNMP_DEFAULT_PEERNAME;
  sess.version = SNMP_DEFAULT_VERSION;
  sess.community_len = SNMP_DEFAULT_COMMUNITY_LEN;
  sess.callback = cb;
  sess.callback_magic = magic;
  sess.isAuthoritative = SNMP_SESS_UNKNOWNAUTH;
  void *ss = snmp_sess_add(&sess, t, NULL, NULL);
  if (!ss)
    erg_err("snmp: cannot start a session on %s", ep);
  return ss;
}

void sim_snmp_loop(struct sim *s, void *ss, uint64_t start_ns, double duration_s) {
  uint64_t end = duration_s > 0 ? start_ns + (uint64_t)(duration_s * 1e9) : 0;
  while (!s->stop && (!end || erg_time_monotonic_ns() < end)) {
    int nfds = 0, block = 0;
    fd_set fds;
    FD_ZERO(&fds);
    struct timeval tv = {0, 200000};
    snmp_sess_select_info(ss, &nfds, &fds, &tv, &block);
    tv = (struct timeval){0, 200000}; /* wake up to notice s->stop */
    if (select(nfds, &fds, NULL, NULL, &tv) > 0)
      snmp_sess_read(ss, &fds);
  }
  snmp_sess_close(ss);
}

int sim_snmp_serve(struct sim *s, const char *host, int port, double duration_s) {
  struct sim_snmp *st = calloc(1, sizeof *st);
  if (!st)
    return -1;
  st->s = s;
  st->start_ns = erg_time_monotonic_ns();
  if (!(st->ss = sim_snmp_listen(host, port, sim_snmp_cb, st))) {
    free(st);
    return -1;
  }
  sim_snmp_loop(s, st->ss, st->start_ns, duration_s);
  free(st);
  return 0;
}
