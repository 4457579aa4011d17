// SPDX-License-Identifier: GPL-3.0-or-later
/* Load source for the SNMP benchmark (not a test): one UDP port serving N
 * rPDU2-shaped PDUs of M outlets, the PDU chosen by the community
 * ("pdu0001" ... ), with the same values snmp_bench.sh writes into its
 * snmpsimd data files: power (k*7 + i*13) % 500 W, energy k*1000 + i (0.1
 * kWh), name "pduK-oI", sysDescr, sysObjectID and the outlet count. v1/v2c
 * GET only (what both pollers send); other requests and unknown communities
 * get no answer. snmpsimd (Python) spends ~2 ms per request and bounds the
 * round; this answers in tens of microseconds, so the pollers themselves
 * are measured. The session is erg-pdusim's (sim_snmp_listen).
 * usage: snmp_bench_agent PORT N M */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include "sim_snmp.h"

static const oid sys_descr[] = {1, 3, 6, 1, 2, 1, 1, 1, 0};
static const oid sys_oid[] = {1, 3, 6, 1, 2, 1, 1, 2, 0};
static const oid rpdu2_sysoid[] = {1, 3, 6, 1, 4, 1, 318, 1, 3, 4, 6};
static const oid outlet_count[] = {1, 3, 6, 1, 4, 1, 318, 1, 1, 26, 4, 2, 1, 6, 1};
/* rPDU2OutletMeteredStatusEntry: .COLUMN.OUTLET follow */
static const oid outlet_entry[] = {1, 3, 6, 1, 4, 1, 318, 1, 1, 26, 9, 4, 3, 1};
#define ENTRY_LEN (sizeof outlet_entry / sizeof(oid))

static int npdu, noutlet;
static void *session; /* answers go out through it */

static int oid_is(const netsnmp_variable_list *v, const oid *o, size_t len) {
  return v->name_length == len && !memcmp(v->name, o, len * sizeof(oid));
}

/* PDU k (1-based) from "pduNNNN"; 0 if not one of ours. */
static int pdu_of(const netsnmp_pdu *pdu) {
  char c[32];
  if (!pdu->community || pdu->community_len >= sizeof c)
    return 0;
  memcpy(c, pdu->community, pdu->community_len);
  c[pdu->community_len] = '\0';
  int k = 0;
  if (sscanf(c, "pdu%d", &k) != 1 || k < 1 || k > npdu)
    return 0;
  return k;
}

static void answer(netsnmp_variable_list *v, int k) {
  char s[64];
  long x;
  if (oid_is(v, sys_descr, 9)) {
    snprintf(s, sizeof s, "bench PDU %d", k);
    snmp_set_var_typed_value(v, ASN_OCTET_STR, s, strlen(s));
  } else if (oid_is(v, sys_oid, 9)) {
    snmp_set_var_typed_value(v, ASN_OBJECT_ID, rpdu2_sysoid, sizeof rpdu2_sysoid);
  } else if (oid_is(v, outlet_count, sizeof outlet_count / sizeof(oid))) {
    x = noutlet;
    snmp_set_var_typed_value(v, ASN_INTEGER, &x, sizeof x);
  } else if (v->name_length == ENTRY_LEN + 2 &&
             !memcmp(v->name, outlet_entry, sizeof outlet_entry) && v->name[ENTRY_LEN + 1] >= 1 &&
             v->name[ENTRY_LEN + 1] <= (oid)noutlet) {
    long col = (long)v->name[ENTRY_LEN], i = (long)v->name[ENTRY_LEN + 1];
    if (col == 3) {
      snprintf(s, sizeof s, "pdu%d-o%ld", k, i);
      snmp_set_var_typed_value(v, ASN_OCTET_STR, s, strlen(s));
      return;
    }
    x = col == 7 ? (k * 7 + i * 13) % 500 : col == 11 ? (long)k * 1000 + i : -1;
    if (x < 0)
      snmp_set_var_typed_value(v, SNMP_NOSUCHOBJECT, NULL, 0);
    else
      snmp_set_var_typed_value(v, ASN_INTEGER, &x, sizeof x);
  } else {
    snmp_set_var_typed_value(v, SNMP_NOSUCHOBJECT, NULL, 0);
  }
}

static int on_request(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu, void *magic) {
  (void)sess;
  (void)reqid;
  (void)magic;
  int k = pdu_of(pdu);
  if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE || pdu->command != SNMP_MSG_GET || !k ||
      pdu->version == SNMP_VERSION_3)
    return 1;
  netsnmp_pdu *resp = snmp_clone_pdu(pdu);
  if (!resp)
    return 1;
  resp->command = SNMP_MSG_RESPONSE;
  resp->errstat = resp->errindex = 0;
  for (netsnmp_variable_list *v = resp->variables; v; v = v->next_variable)
    answer(v, k);
  if (!snmp_sess_send(session, resp))
    snmp_free_pdu(resp);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4 || (npdu = atoi(argv[2])) < 1 || (noutlet = atoi(argv[3])) < 1) {
    fprintf(stderr, "usage: snmp_bench_agent PORT N M\n");
    return 1;
  }
  if (!(session = sim_snmp_listen("127.0.0.1", atoi(argv[1]), on_request, NULL)))
    return 1;
  /* Room for a full round's requests queued at once. */
  int rcv = 8 << 20;
  setsockopt(snmp_sess_transport(session)->sock, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
  for (;;) {
    int nfds = 0, block = 1;
    fd_set fds;
    struct timeval tv = {1, 0};
    FD_ZERO(&fds);
    snmp_sess_select_info(session, &nfds, &fds, &tv, &block);
    if (select(nfds, &fds, NULL, NULL, NULL) > 0)
      snmp_sess_read(session, &fds);
  }
}
