/* mcast_fanout: one sender, two receivers, one InfiniBand multicast group.
 *
 * Every role joins the group through the SA (sa_mcmember.c); receivers
 * attach a UD QP to it and post one receive per expected message (a UD
 * multicast has no flow control: a message that finds no receive posted
 * is dropped); the sender sends --count numbered messages to the group.
 * Each receiver must get every message exactly once and in order. Then
 * the receivers detach, and everyone leaves the group.
 *
 *   --role all   (default) all three roles in this process, on the first
 *                three devices (ibfab0 sends, ibfab1 and ibfab2 receive)
 *   --role recv  receive on one device; prints "ready" once attached
 *   --role send  send on one device (start it after the receivers' "ready")
 *
 * Exit status 0 only if every receiver got every message (recv and all),
 * or every message was sent (send). See README.md. */
#define _DEFAULT_SOURCE /* htobe32, clock_gettime */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>
#include <infiniband/verbs.h>

#include "sa_mcmember.h"

enum role { ROLE_ALL, ROLE_SEND, ROLE_RECV };

struct options {
  enum role role;
  unsigned count;
  unsigned size; /* payload bytes; the first 4 hold the sequence number */
  unsigned timeout_s;
  const char *device;
  union ibv_gid mgid;
};

static const uint32_t GROUP_QKEY = 0x11223344;
static const unsigned SEND_DEPTH = 128;
static const unsigned GRH_BYTES = 40;
static const unsigned GRACE_MS = 100; /* how long receivers look for extra copies */

/* One HCA's resources: a UD QP, its CQ and a registered buffer of `slots`
 * slots of `slot_size` bytes. */
struct endpoint {
  char name[IBV_SYSFS_NAME_MAX];
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  struct ibv_mr *mr;
  uint8_t *buf;
  size_t slot_size;
  unsigned slots;
  uint16_t lid, sm_lid;
  union ibv_gid gid;
  struct mc_group group;
  int joined, attached;
};

/* What a receiver saw. */
struct tally {
  unsigned next; /* the sequence number expected next */
  unsigned distinct, duplicates, out_of_order, corrupt;
  uint8_t *seen; /* per sequence number */
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *gid_text(const union ibv_gid *gid, char out[INET6_ADDRSTRLEN]) {
  return inet_ntop(AF_INET6, gid->raw, out, INET6_ADDRSTRLEN);
}

/* Prints "who: what" on stderr; returns -1. */
static int fail(const char *who, const char *what) {
  fprintf(stderr, "%s: %s\n", who, what);
  return -1;
}

/* ---- endpoints ---------------------------------------------------------- */

static int endpoint_open(struct endpoint *ep, struct ibv_device *dev, unsigned slots, size_t slot_size,
                         unsigned send_depth, unsigned recv_depth) {
  memset(ep, 0, sizeof *ep);
  snprintf(ep->name, sizeof ep->name, "%s", ibv_get_device_name(dev));
  ep->slots = slots;
  ep->slot_size = slot_size;
  ep->ctx = ibv_open_device(dev);
  if (!ep->ctx) return fail(ep->name, "ibv_open_device failed");
  struct ibv_port_attr port;
  if (ibv_query_port(ep->ctx, 1, &port) || port.state != IBV_PORT_ACTIVE || ibv_query_gid(ep->ctx, 1, 0, &ep->gid))
    return fail(ep->name, "port 1 is not active");
  ep->lid = port.lid;
  ep->sm_lid = port.sm_lid;
  ep->pd = ibv_alloc_pd(ep->ctx);
  ep->cq = ibv_create_cq(ep->ctx, (int)(send_depth + recv_depth), NULL, NULL, 0);
  ep->buf = calloc(slots, slot_size);
  if (!ep->pd || !ep->cq || !ep->buf) return fail(ep->name, "out of resources");
  ep->mr = ibv_reg_mr(ep->pd, ep->buf, slots * slot_size, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_qp_init_attr attr = {
      .send_cq = ep->cq,
      .recv_cq = ep->cq,
      .cap = {.max_send_wr = send_depth, .max_recv_wr = recv_depth, .max_send_sge = 1, .max_recv_sge = 1},
      .qp_type = IBV_QPT_UD,
  };
  ep->qp = ep->mr ? ibv_create_qp(ep->pd, &attr) : NULL;
  if (!ep->qp) return fail(ep->name, "cannot create a UD QP");
  return 0;
}

/* Joins the group and brings the QP to RTS with the group's Q_Key. */
static int endpoint_join(struct endpoint *ep, const union ibv_gid *mgid) {
  if (sa_join(ep->name, ep->sm_lid, mgid, &ep->gid, GROUP_QKEY, &ep->group)) return -1;
  ep->joined = 1;
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = ep->group.qkey};
  int e = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  a.qp_state = IBV_QPS_RTR;
  if (!e) e = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (!e) e = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  if (e) fprintf(stderr, "%s: ibv_modify_qp failed (%s)\n", ep->name, strerror(e));
  return e ? -1 : 0;
}

/* Detaches, leaves the group, and frees everything; -1 if a step failed. */
static int endpoint_close(struct endpoint *ep) {
  int result = 0;
  if (ep->attached && ibv_detach_mcast(ep->qp, &ep->group.mgid, ep->group.mlid))
    result = fail(ep->name, "ibv_detach_mcast failed");
  if (ep->joined && sa_leave(ep->name, ep->sm_lid, &ep->group, &ep->gid)) result = -1;
  if (ep->qp) ibv_destroy_qp(ep->qp);
  if (ep->mr) ibv_dereg_mr(ep->mr);
  if (ep->cq) ibv_destroy_cq(ep->cq);
  if (ep->pd) ibv_dealloc_pd(ep->pd);
  if (ep->ctx) ibv_close_device(ep->ctx);
  free(ep->buf);
  return result;
}

/* ---- receiving ---------------------------------------------------------- */

/* Joins, attaches, and posts one receive per message (slot i for message i). */
static int receiver_start(struct endpoint *ep, const struct options *o) {
  if (endpoint_join(ep, &o->mgid)) return -1;
  if (ibv_attach_mcast(ep->qp, &ep->group.mgid, ep->group.mlid))
    return fail(ep->name, "ibv_attach_mcast failed");
  ep->attached = 1;
  for (unsigned i = 0; i < o->count; ++i) {
    struct ibv_sge sge = {(uintptr_t)(ep->buf + i * ep->slot_size), (uint32_t)ep->slot_size, ep->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_recv(ep->qp, &wr, &bad)) return fail(ep->name, "ibv_post_recv failed");
  }
  return 0;
}

/* Checks one received message: the GRH slot, then the payload. */
static void receiver_check(const struct endpoint *ep, const struct ibv_wc *wc, const struct options *o,
                           struct tally *t) {
  const uint8_t *payload = ep->buf + wc->wr_id * ep->slot_size + GRH_BYTES;
  if (wc->status != IBV_WC_SUCCESS || wc->byte_len != GRH_BYTES + o->size || !(wc->wc_flags & IBV_WC_GRH)) {
    ++t->corrupt;
    return;
  }
  uint32_t seq;
  memcpy(&seq, payload, sizeof seq);
  seq = be32toh(seq);
  for (unsigned i = 4; i < o->size; ++i)
    if (payload[i] != (uint8_t)(seq + i)) {
      ++t->corrupt;
      return;
    }
  if (seq >= o->count) {
    ++t->corrupt;
    return;
  }
  if (t->seen[seq]++) ++t->duplicates;
  else ++t->distinct;
  if (seq != t->next) ++t->out_of_order;
  t->next = seq + 1;
}

static void receiver_poll(struct endpoint *ep, const struct options *o, struct tally *t) {
  struct ibv_wc wc[32];
  int n;
  while ((n = ibv_poll_cq(ep->cq, 32, wc)) > 0)
    for (int i = 0; i < n; ++i) receiver_check(ep, &wc[i], o, t);
}

/* Polls until every message came or the timeout, then GRACE_MS more for
 * extra copies; prints the receiver's summary line; 0 if all is well. */
static int receiver_finish(struct endpoint *ep, const struct options *o, struct tally *t) {
  const double deadline = now_s() + o->timeout_s;
  while (t->distinct + t->duplicates + t->corrupt < o->count && now_s() < deadline) receiver_poll(ep, o, t);
  const double grace_end = now_s() + GRACE_MS / 1e3;
  while (now_s() < grace_end) receiver_poll(ep, o, t);
  const int ok = t->distinct == o->count && !t->duplicates && !t->out_of_order && !t->corrupt;
  printf("recv %s (LID %u): %u/%u messages, %u missing, %u duplicate, %u out of order, %u corrupt: %s\n", ep->name,
         ep->lid, t->distinct, o->count, o->count - t->distinct, t->duplicates, t->out_of_order, t->corrupt,
         ok ? "all received, exactly once, in order" : "FAILED");
  return ok ? 0 : -1;
}

/* ---- sending ------------------------------------------------------------ */

/* Sends message `seq` from send slot seq % SEND_DEPTH. */
static int post_message(struct endpoint *ep, struct ibv_ah *ah, uint32_t seq, unsigned size) {
  uint8_t *slot = ep->buf + (seq % SEND_DEPTH) * ep->slot_size;
  const uint32_t be_seq = htobe32(seq);
  memcpy(slot, &be_seq, sizeof be_seq);
  for (unsigned i = 4; i < size; ++i) slot[i] = (uint8_t)(seq + i);
  struct ibv_sge sge = {(uintptr_t)slot, size, ep->mr->lkey};
  struct ibv_send_wr wr = {
      .wr_id = seq,
      .sg_list = &sge,
      .num_sge = 1,
      .opcode = IBV_WR_SEND,
      .send_flags = IBV_SEND_SIGNALED,
      .wr.ud = {.ah = ah, .remote_qpn = 0xFFFFFF, .remote_qkey = ep->group.qkey},
  }, *bad;
  return ibv_post_send(ep->qp, &wr, &bad);
}

/* Joins, then sends every message, at most SEND_DEPTH outstanding; 0 if
 * every send completed successfully. */
static int sender_run(struct endpoint *ep, const struct options *o) {
  if (endpoint_join(ep, &o->mgid)) return -1;
  const struct mc_group *g = &ep->group;
  if (o->size > 128u << g->mtu) /* IBV_MTU_256 is 1: 256 bytes */
    return fail(ep->name, "--size exceeds the group's MTU");
  struct ibv_ah_attr attr = {
      .dlid = g->mlid,
      .sl = g->sl,
      .is_global = 1,
      .port_num = 1,
      .grh = {.dgid = g->mgid, .flow_label = g->flow_label, .hop_limit = g->hop_limit,
              .traffic_class = g->traffic_class},
  };
  struct ibv_ah *ah = ibv_create_ah(ep->pd, &attr);
  if (!ah) return fail(ep->name, "ibv_create_ah failed");
  const double start = now_s(), deadline = start + o->timeout_s;
  unsigned posted = 0, completed = 0, failed = 0;
  while (completed < o->count && now_s() < deadline) {
    while (posted < o->count && posted - completed < SEND_DEPTH && post_message(ep, ah, posted, o->size) == 0)
      ++posted;
    struct ibv_wc wc[32];
    const int n = ibv_poll_cq(ep->cq, 32, wc);
    for (int i = 0; i < n; ++i) failed += wc[i].status != IBV_WC_SUCCESS;
    if (n > 0) completed += (unsigned)n;
  }
  const double elapsed = now_s() - start;
  ibv_destroy_ah(ah);
  char mgid[INET6_ADDRSTRLEN];
  printf("send %s (LID %u): %u/%u messages of %u bytes to %s (MLID 0x%04x), %u failed, in %.1f ms\n", ep->name,
         ep->lid, completed, o->count, o->size, gid_text(&g->mgid, mgid), g->mlid, failed, elapsed * 1e3);
  return completed == o->count && !failed ? 0 : -1;
}

/* ---- the roles ------------------------------------------------------------ */

/* Device `name`, or the first one if `name` is NULL. */
static struct ibv_device *find_device(struct ibv_device **list, int n, const char *name) {
  for (int i = 0; i < n; ++i)
    if (!name || strcmp(ibv_get_device_name(list[i]), name) == 0) return list[i];
  fail("--device", "no such device");
  return NULL;
}

static size_t recv_slot(const struct options *o) { return GRH_BYTES + o->size; }

/* One receiver, on its own: "ready" once attached, then the summary. */
static int run_recv(struct ibv_device *dev, const struct options *o) {
  struct endpoint ep = {.ctx = NULL};
  struct tally t = {.seen = calloc(o->count, 1)};
  int e = !t.seen || endpoint_open(&ep, dev, o->count, recv_slot(o), 1, o->count) || receiver_start(&ep, o);
  if (!e) {
    char mgid[INET6_ADDRSTRLEN];
    printf("ready: %s (LID %u) attached to %s (MLID 0x%04x)\n", ep.name, ep.lid, gid_text(&ep.group.mgid, mgid),
           ep.group.mlid);
    fflush(stdout);
    e = receiver_finish(&ep, o, &t);
  }
  e |= endpoint_close(&ep);
  free(t.seen);
  return e;
}

static int run_send(struct ibv_device *dev, const struct options *o) {
  struct endpoint ep = {.ctx = NULL};
  int e = endpoint_open(&ep, dev, SEND_DEPTH, o->size, SEND_DEPTH, 1) || sender_run(&ep, o);
  e |= endpoint_close(&ep);
  return e;
}

/* All three roles: devices 0 (sender), 1 and 2 (receivers). */
static int run_all(struct ibv_device **list, int n, const struct options *o) {
  if (n < 3) return fail("--role all", "needs three devices");
  struct endpoint sender = {.ctx = NULL}, recv[2] = {{.ctx = NULL}, {.ctx = NULL}};
  struct tally t[2] = {{.seen = calloc(o->count, 1)}, {.seen = calloc(o->count, 1)}};
  int e = !t[0].seen || !t[1].seen;
  e = e || endpoint_open(&recv[0], list[1], o->count, recv_slot(o), 1, o->count);
  e = e || endpoint_open(&recv[1], list[2], o->count, recv_slot(o), 1, o->count);
  e = e || endpoint_open(&sender, list[0], SEND_DEPTH, o->size, SEND_DEPTH, 1);
  e = e || receiver_start(&recv[0], o) || receiver_start(&recv[1], o);
  if (!e) {
    e = sender_run(&sender, o);
    e = e || (receiver_finish(&recv[0], o, &t[0]) | receiver_finish(&recv[1], o, &t[1]));
  }
  e |= endpoint_close(&recv[0]) | endpoint_close(&recv[1]) | endpoint_close(&sender);
  free(t[0].seen);
  free(t[1].seen);
  return e;
}

/* ---- main ----------------------------------------------------------------- */

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--role all|send|recv] [--count N] [--size BYTES] [--device NAME]\n"
          "          [--mgid GID] [--timeout SECONDS]\n",
          argv0);
  return 2;
}

static int parse(int argc, char **argv, struct options *o) {
  *o = (struct options){.role = ROLE_ALL, .count = 1000, .size = 64, .timeout_s = 30};
  inet_pton(AF_INET6, "ff15:1234::fa:1", o->mgid.raw);
  for (int i = 1; i < argc; i += 2) {
    const char *key = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!value) return -1;
    if (!strcmp(key, "--role")) {
      if (!strcmp(value, "all")) o->role = ROLE_ALL;
      else if (!strcmp(value, "send")) o->role = ROLE_SEND;
      else if (!strcmp(value, "recv")) o->role = ROLE_RECV;
      else return -1;
    } else if (!strcmp(key, "--count")) o->count = (unsigned)strtoul(value, NULL, 0);
    else if (!strcmp(key, "--size")) o->size = (unsigned)strtoul(value, NULL, 0);
    else if (!strcmp(key, "--timeout")) o->timeout_s = (unsigned)strtoul(value, NULL, 0);
    else if (!strcmp(key, "--device")) o->device = value;
    else if (!strcmp(key, "--mgid")) {
      if (inet_pton(AF_INET6, value, o->mgid.raw) != 1 || o->mgid.raw[0] != 0xff) return -1;
    } else return -1;
  }
  return o->count && o->size >= 4 ? 0 : -1;
}

/* The most messages a receiver can have posted: a receive and a
 * completion each. */
static unsigned most_messages(struct ibv_device *dev) {
  struct ibv_device_attr attr;
  struct ibv_context *ctx = ibv_open_device(dev);
  unsigned most = 0;
  if (ctx && ibv_query_device(ctx, &attr) == 0)
    most = (unsigned)(attr.max_qp_wr < attr.max_cqe - 1 ? attr.max_qp_wr : attr.max_cqe - 1);
  if (ctx) ibv_close_device(ctx);
  return most;
}

static int run(const struct options *o) {
  int n = 0, e = -1;
  struct ibv_device **list = ibv_get_device_list(&n);
  if (!list || !n) {
    fail("mcast_fanout", "no RDMA devices");
  } else if (o->count > most_messages(list[0])) {
    fail("--count", "more than a receiver can post (max_qp_wr, max_cqe)");
  } else if (o->role == ROLE_ALL) {
    e = run_all(list, n, o);
  } else {
    struct ibv_device *dev = find_device(list, n, o->device);
    e = dev ? (o->role == ROLE_SEND ? run_send(dev, o) : run_recv(dev, o)) : -1;
  }
  if (list) ibv_free_device_list(list);
  return e;
}

int main(int argc, char **argv) {
  struct options o;
  if (parse(argc, argv, &o)) return usage(argv[0]);
  const int e = umad_init() < 0 ? fail("mcast_fanout", "umad_init failed") : run(&o);
  if (o.role == ROLE_ALL) printf("mcast_fanout: %s\n", e ? "FAILED" : "every receiver got every message");
  umad_done();
  return e ? 1 : 0;
}
