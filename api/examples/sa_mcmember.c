/* SA MCMemberRecord join and leave over libibumad (see sa_mcmember.h). */
#define _DEFAULT_SOURCE /* htobe16 and friends */
#include "sa_mcmember.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>

enum {
  MAD_SIZE = 256,
  SA_CLASS = 0x03,
  SA_CLASS_VERSION = 2,
  METHOD_SET = 0x02,
  METHOD_GET_RESP = 0x81,
  METHOD_DELETE = 0x15,
  METHOD_DELETE_RESP = 0x95,
  ATTR_MCMEMBER_RECORD = 0x0038,
  SA_QP = 1,
  SEND_TIMEOUT_MS = 200,
  SEND_RETRIES = 3,
  RECV_TIMEOUT_MS = 5000,
  /* MAD offsets: common header, SA header, the record. */
  MAD_METHOD = 3,
  MAD_STATUS = 4,
  MAD_TID = 8,
  MAD_ATTR_ID = 16,
  SA_COMPONENT_MASK = 48,
  SA_RECORD = 56,
  RECORD_SIZE = MAD_SIZE - SA_RECORD,
  /* MCMemberRecord offsets. */
  REC_MGID = 0,
  REC_PORT_GID = 16,
  REC_QKEY = 32,
  REC_MLID = 36,
  REC_MTU = 38,
  REC_TCLASS = 39,
  REC_PKEY = 40,
  REC_SL_FLOW_HOP = 44,
  REC_SCOPE_JOIN_STATE = 48,
};

/* MGID, PortGID, Q_Key, TClass, P_Key, SL, FlowLabel, JoinState. */
static const uint64_t JOIN_COMPONENTS = 0x130C7;
static const uint32_t SA_QKEY = 0x80010000;
static const uint8_t FULL_MEMBER = 1;

static void put16(uint8_t *p, uint16_t v) {
  v = htobe16(v);
  memcpy(p, &v, sizeof v);
}
static void put32(uint8_t *p, uint32_t v) {
  v = htobe32(v);
  memcpy(p, &v, sizeof v);
}
static void put64(uint8_t *p, uint64_t v) {
  v = htobe64(v);
  memcpy(p, &v, sizeof v);
}
static uint16_t get16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return be16toh(v);
}
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return be32toh(v);
}

/* Sends the MAD in `umad` to the SA at `sm_lid` through `agent`, waits for
 * the answer with `answer_method`, which replaces it; 0 on success. */
static int exchange(const char *ca, int fd, int agent, void *umad, uint16_t sm_lid, uint8_t answer_method) {
  uint8_t *mad = umad_get_mad(umad);
  umad_set_addr(umad, sm_lid, SA_QP, 0, (int)SA_QKEY); /* the API takes an int */
  if (umad_send(fd, agent, umad, MAD_SIZE, SEND_TIMEOUT_MS, SEND_RETRIES) < 0) {
    fprintf(stderr, "%s: umad_send to the SA failed\n", ca);
    return -1;
  }
  int length = MAD_SIZE;
  if (umad_recv(fd, umad, &length, RECV_TIMEOUT_MS) < 0 || umad_status(umad) != 0) {
    fprintf(stderr, "%s: no answer from the SA (LID %u)\n", ca, sm_lid);
    return -1;
  }
  if (mad[MAD_METHOD] != answer_method || get16(mad + MAD_STATUS) != 0) {
    fprintf(stderr, "%s: the SA answered method 0x%02x, status 0x%04x\n", ca, mad[MAD_METHOD],
            get16(mad + MAD_STATUS));
    return -1;
  }
  return 0;
}

/* Sends one MCMemberRecord request with `method` from port 1 of `ca` to
 * the SA at `sm_lid` and waits for the SA's answer with `answer_method`; on success replaces
 * `record` with the answer's and returns 0. */
static int sa_request(const char *ca, uint16_t sm_lid, uint8_t method, uint8_t answer_method,
                      uint8_t record[RECORD_SIZE]) {
  static uint32_t next_tid = 1;
  const int fd = umad_open_port(ca, 1);
  if (fd < 0) {
    fprintf(stderr, "%s: umad_open_port failed (%d)\n", ca, fd);
    return -1;
  }
  const int agent = umad_register(fd, SA_CLASS, SA_CLASS_VERSION, 0, NULL);
  void *umad = calloc(1, (size_t)umad_size() + MAD_SIZE);
  int result = -1;
  if (agent < 0 || !umad) {
    fprintf(stderr, "%s: cannot register an SA agent\n", ca);
  } else {
    uint8_t *mad = umad_get_mad(umad);
    mad[0] = 1; /* base version */
    mad[1] = SA_CLASS;
    mad[2] = SA_CLASS_VERSION;
    mad[MAD_METHOD] = method;
    put64(mad + MAD_TID, ((uint64_t)getpid() << 32) | next_tid++);
    put16(mad + MAD_ATTR_ID, ATTR_MCMEMBER_RECORD);
    put64(mad + SA_COMPONENT_MASK, JOIN_COMPONENTS);
    memcpy(mad + SA_RECORD, record, RECORD_SIZE);
    result = exchange(ca, fd, agent, umad, sm_lid, answer_method);
    if (result == 0) memcpy(record, mad + SA_RECORD, RECORD_SIZE);
  }
  free(umad);
  if (agent >= 0) umad_unregister(fd, agent);
  umad_close_port(fd);
  return result;
}

/* The request record: the fields JOIN_COMPONENTS selects. */
static void fill_record(uint8_t *record, const union ibv_gid *mgid, const union ibv_gid *port_gid, uint32_t qkey) {
  memset(record, 0, RECORD_SIZE);
  memcpy(record + REC_MGID, mgid->raw, 16);
  memcpy(record + REC_PORT_GID, port_gid->raw, 16);
  put32(record + REC_QKEY, qkey);
  put16(record + REC_PKEY, 0xffff);
  record[REC_SCOPE_JOIN_STATE] = FULL_MEMBER;
}

int sa_join(const char *ca, uint16_t sm_lid, const union ibv_gid *mgid, const union ibv_gid *port_gid, uint32_t qkey,
            struct mc_group *group) {
  uint8_t record[RECORD_SIZE];
  fill_record(record, mgid, port_gid, qkey);
  if (sa_request(ca, sm_lid, METHOD_SET, METHOD_GET_RESP, record) != 0) return -1;
  memcpy(group->mgid.raw, record + REC_MGID, 16);
  group->qkey = get32(record + REC_QKEY);
  group->mlid = get16(record + REC_MLID);
  group->pkey = get16(record + REC_PKEY);
  group->mtu = record[REC_MTU] & 0x3f;
  group->traffic_class = record[REC_TCLASS];
  const uint32_t sl_flow_hop = get32(record + REC_SL_FLOW_HOP);
  group->sl = (uint8_t)(sl_flow_hop >> 28);
  group->flow_label = (sl_flow_hop >> 8) & 0xfffff;
  group->hop_limit = (uint8_t)sl_flow_hop;
  return 0;
}

int sa_leave(const char *ca, uint16_t sm_lid, const struct mc_group *group, const union ibv_gid *port_gid) {
  uint8_t record[RECORD_SIZE];
  fill_record(record, &group->mgid, port_gid, group->qkey);
  return sa_request(ca, sm_lid, METHOD_DELETE, METHOD_DELETE_RESP, record);
}
