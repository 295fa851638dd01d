/* mcast_fanout: one sender, several receivers, UD multicast or unicast.
 *
 * Multicast (default): every role joins the group through the SA
 * (sa_mcmember.c); receivers attach a UD QP to it; the sender sends
 * --count numbered messages to the group. Unicast (--mode unicast): the
 * sender sends each message to every receiver's QP in turn (--to LID:QPN,
 * or the receivers of --role all). Receivers post one receive per expected
 * message (UD has no flow control: a message that finds no receive posted
 * is dropped).
 *
 * Message `seq` (0, 1, ...) is size_of(seq) bytes (--size MIN-MAX: sizes
 * spread over the range): its sequence number (4 bytes, big-endian), then
 * pattern_byte(seq, i) at every offset i, so that no two messages are
 * alike. Each receiver checks every message: its status, its length
 * against its sequence number, every byte, the GRH (present with its
 * group's MGID for multicast, absent for unicast), that every message came
 * from one source (LID, QPN, and GID with a GRH; printed, for the caller
 * to compare with the sender's), and that it got every message exactly
 * once and in order. Then the receivers detach, and everyone leaves.
 *
 *   --role all   (default) every role in this process: the sender on
 *                --device (the first device), receivers on --receivers
 *                (ibfab1,ibfab2)
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
enum mode { MODE_MULTICAST, MODE_UNICAST };

#define MAX_PEERS 16 /* receivers of --role all, destinations of --to */

/* A unicast destination: a receiver's port LID and QP number. */
struct peer {
  uint16_t lid;
  uint32_t qpn;
};

struct options {
  enum role role;
  enum mode mode;
  unsigned count;
  unsigned min_size, max_size; /* payload bytes; the first 4 hold the sequence number */
  unsigned timeout_s;
  const char *device;
  char *receivers[MAX_PEERS]; /* --role all */
  unsigned nreceivers;
  struct peer to[MAX_PEERS]; /* --role send --mode unicast */
  unsigned nto;
  union ibv_gid mgid;
};

static const uint32_t GROUP_QKEY = 0x11223344;
static const uint32_t UNICAST_QKEY = 0x0badcafe;
static const unsigned SEND_DEPTH = 128;
static const unsigned GRH_BYTES = 40;
static const unsigned GRACE_MS = 100; /* how long receivers look for extra copies */

/* The payload: message `seq` is size_of(seq) bytes, byte i (from 4 on) is
 * pattern_byte(seq, i). */
static unsigned size_of(const struct options *o, uint32_t seq) {
  return o->min_size + (unsigned)(((uint64_t)seq * 389u) % (o->max_size - o->min_size + 1));
}

static uint8_t pattern_byte(uint32_t seq, unsigned i) {
  return (uint8_t)((seq * 167u + i * 13u) ^ (seq >> 8) ^ (i >> 8));
}

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
  unsigned port_mtu; /* bytes */
  union ibv_gid gid;
  struct mc_group group;
  int joined, attached;
};

/* What a receiver saw. */
struct tally {
  unsigned next; /* the sequence number expected next */
  unsigned distinct, duplicates, out_of_order, corrupt, bad_source, bad_grh;
  uint8_t *seen; /* per sequence number */
  int have_source; /* the first message's source, which every other must share */
  uint16_t slid;
  uint32_t src_qp;
  uint8_t sgid[16];
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
  ep->port_mtu = 128u << port.active_mtu; /* IBV_MTU_256 is 1 */
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

/* Brings the QP to RTS with Q_Key `qkey`. */
static int endpoint_ready(struct endpoint *ep, uint32_t qkey) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = qkey};
  int e = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  a.qp_state = IBV_QPS_RTR;
  if (!e) e = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (!e) e = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  if (e) fprintf(stderr, "%s: ibv_modify_qp failed (%s)\n", ep->name, strerror(e));
  return e ? -1 : 0;
}

/* Multicast: joins the group and readies the QP with the group's Q_Key;
 * unicast: readies it with UNICAST_QKEY. */
static int endpoint_start(struct endpoint *ep, const struct options *o) {
  if (o->mode == MODE_UNICAST) return endpoint_ready(ep, UNICAST_QKEY);
  if (sa_join(ep->name, ep->sm_lid, &o->mgid, &ep->gid, GROUP_QKEY, &ep->group)) return -1;
  ep->joined = 1;
  return endpoint_ready(ep, ep->group.qkey);
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

/* Readies the QP (joined and attached for multicast) and posts one
 * receive per message (slot i for message i). */
static int receiver_start(struct endpoint *ep, const struct options *o) {
  if (endpoint_start(ep, o)) return -1;
  if (o->mode == MODE_MULTICAST) {
    if (ibv_attach_mcast(ep->qp, &ep->group.mgid, ep->group.mlid))
      return fail(ep->name, "ibv_attach_mcast failed");
    ep->attached = 1;
  }
  for (unsigned i = 0; i < o->count; ++i) {
    struct ibv_sge sge = {(uintptr_t)(ep->buf + i * ep->slot_size), (uint32_t)ep->slot_size, ep->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_recv(ep->qp, &wr, &bad)) return fail(ep->name, "ibv_post_recv failed");
  }
  return 0;
}

/* Whether message `seq` arrived whole: its length, then every byte. */
static int payload_intact(const uint8_t *payload, uint32_t byte_len, uint32_t seq, const struct options *o) {
  const unsigned size = size_of(o, seq);
  if (byte_len != GRH_BYTES + size) return 0;
  for (unsigned i = 4; i < size; ++i)
    if (payload[i] != pattern_byte(seq, i)) return 0;
  return 1;
}

/* Whether the GRH is as the mode says: with multicast, present, to the
 * group's MGID, its version 6; with unicast (AHs without GRH), absent. */
static int grh_expected(const struct endpoint *ep, const struct ibv_wc *wc, const uint8_t *grh,
                        const struct options *o) {
  if (o->mode == MODE_UNICAST) return !(wc->wc_flags & IBV_WC_GRH);
  return (wc->wc_flags & IBV_WC_GRH) && grh[0] >> 4 == 6 && !memcmp(grh + 24, ep->group.mgid.raw, 16);
}

/* Whether the message came from the source of the first one (LID, QPN,
 * and the GRH's source GID with multicast). */
static int same_source(const struct ibv_wc *wc, const uint8_t *grh, const struct options *o, struct tally *t) {
  const uint8_t *sgid = o->mode == MODE_MULTICAST ? grh + 8 : NULL;
  if (!t->have_source) {
    t->have_source = 1;
    t->slid = wc->slid;
    t->src_qp = wc->src_qp;
    if (sgid) memcpy(t->sgid, sgid, 16);
  }
  return wc->slid == t->slid && wc->src_qp == t->src_qp && (!sgid || !memcmp(sgid, t->sgid, 16));
}

/* Checks one received message: status, GRH, source, then the payload
 * against its sequence number; counts it in the tally. */
static void receiver_check(const struct endpoint *ep, const struct ibv_wc *wc, const struct options *o,
                           struct tally *t) {
  const uint8_t *grh = ep->buf + wc->wr_id * ep->slot_size;
  const uint8_t *payload = grh + GRH_BYTES;
  if (wc->status != IBV_WC_SUCCESS || wc->byte_len < GRH_BYTES + 4) {
    ++t->corrupt;
    return;
  }
  if (!grh_expected(ep, wc, grh, o)) ++t->bad_grh;
  if (!same_source(wc, grh, o, t)) ++t->bad_source;
  uint32_t seq;
  memcpy(&seq, payload, sizeof seq);
  seq = be32toh(seq);
  if (seq >= o->count || !payload_intact(payload, wc->byte_len, seq, o)) {
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
  const int ok = t->distinct == o->count && !t->duplicates && !t->out_of_order && !t->corrupt && !t->bad_source &&
                 !t->bad_grh;
  printf("recv %s (LID %u): %u/%u messages, %u missing, %u duplicate, %u out of order, %u corrupt, "
         "%u from another source, %u with a wrong GRH; from LID %u QPN 0x%06x: %s\n",
         ep->name, ep->lid, t->distinct, o->count, o->count - t->distinct, t->duplicates, t->out_of_order, t->corrupt,
         t->bad_source, t->bad_grh, t->slid, t->src_qp, ok ? "all received, exactly once, in order" : "FAILED");
  return ok ? 0 : -1;
}

/* ---- sending ------------------------------------------------------------ */

/* Sends message `seq` to `ah` (QP `qpn`, Q_Key `qkey`) from send slot
 * `k` % SEND_DEPTH. */
static int post_message(struct endpoint *ep, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, uint32_t seq, unsigned k,
                        const struct options *o) {
  uint8_t *slot = ep->buf + (k % SEND_DEPTH) * ep->slot_size;
  const unsigned size = size_of(o, seq);
  const uint32_t be_seq = htobe32(seq);
  memcpy(slot, &be_seq, sizeof be_seq);
  for (unsigned i = 4; i < size; ++i) slot[i] = pattern_byte(seq, i);
  struct ibv_sge sge = {(uintptr_t)slot, size, ep->mr->lkey};
  struct ibv_send_wr wr = {
      .wr_id = k,
      .sg_list = &sge,
      .num_sge = 1,
      .opcode = IBV_WR_SEND,
      .send_flags = IBV_SEND_SIGNALED,
      .wr.ud = {.ah = ah, .remote_qpn = qpn, .remote_qkey = qkey},
  }, *bad;
  return ibv_post_send(ep->qp, &wr, &bad);
}

/* Where the sender sends: one AH per destination (the group, or each
 * receiver's LID), and its QPN and Q_Key. */
struct destinations {
  unsigned n;
  struct ibv_ah *ah[MAX_PEERS];
  uint32_t qpn[MAX_PEERS], qkey;
  unsigned mtu; /* bytes: the group's, or the port's */
};

static int destinations_open(struct endpoint *ep, const struct options *o, struct destinations *d) {
  memset(d, 0, sizeof *d);
  if (o->mode == MODE_UNICAST) {
    d->qkey = UNICAST_QKEY;
    d->mtu = ep->port_mtu;
    for (; d->n < o->nto; ++d->n) {
      struct ibv_ah_attr attr = {.dlid = o->to[d->n].lid, .port_num = 1};
      d->qpn[d->n] = o->to[d->n].qpn;
      if (!(d->ah[d->n] = ibv_create_ah(ep->pd, &attr))) return fail(ep->name, "ibv_create_ah failed");
    }
    return 0;
  }
  const struct mc_group *g = &ep->group;
  struct ibv_ah_attr attr = {
      .dlid = g->mlid,
      .sl = g->sl,
      .is_global = 1,
      .port_num = 1,
      .grh = {.dgid = g->mgid, .flow_label = g->flow_label, .hop_limit = g->hop_limit,
              .traffic_class = g->traffic_class},
  };
  d->qkey = g->qkey;
  d->mtu = 128u << g->mtu; /* IBV_MTU_256 is 1: 256 bytes */
  d->qpn[0] = 0xFFFFFF;
  if (!(d->ah[0] = ibv_create_ah(ep->pd, &attr))) return fail(ep->name, "ibv_create_ah failed");
  d->n = 1;
  return 0;
}

static void destinations_close(struct destinations *d) {
  for (unsigned i = 0; i < MAX_PEERS; ++i)
    if (d->ah[i]) ibv_destroy_ah(d->ah[i]);
}

/* Readies the QP (joined, for multicast), then sends every message to
 * every destination in turn (send k is message k / n to destination
 * k % n), at most SEND_DEPTH outstanding; 0 if every send completed
 * successfully. */
static int sender_run(struct endpoint *ep, const struct options *o) {
  struct destinations d;
  if (endpoint_start(ep, o) || destinations_open(ep, o, &d)) {
    destinations_close(&d);
    return -1;
  }
  if (o->max_size > d.mtu) {
    destinations_close(&d);
    return fail(ep->name, "--size exceeds the MTU");
  }
  const unsigned sends = o->count * d.n;
  const double start = now_s(), deadline = start + o->timeout_s;
  unsigned posted = 0, completed = 0, failed = 0;
  while (completed < sends && now_s() < deadline) {
    while (posted < sends && posted - completed < SEND_DEPTH &&
           post_message(ep, d.ah[posted % d.n], d.qpn[posted % d.n], d.qkey, posted / d.n, posted, o) == 0)
      ++posted;
    struct ibv_wc wc[32];
    const int n = ibv_poll_cq(ep->cq, 32, wc);
    for (int i = 0; i < n; ++i) failed += wc[i].status != IBV_WC_SUCCESS;
    if (n > 0) completed += (unsigned)n;
  }
  const double elapsed = now_s() - start;
  destinations_close(&d);
  char to[64] = "";
  if (o->mode == MODE_MULTICAST) {
    char mgid[INET6_ADDRSTRLEN];
    snprintf(to, sizeof to, "%s (MLID 0x%04x)", gid_text(&ep->group.mgid, mgid), ep->group.mlid);
  } else {
    snprintf(to, sizeof to, "%u receiver QPs", d.n);
  }
  printf("send %s (LID %u QPN 0x%06x): %u/%u messages of %u-%u bytes to %s, %u failed, in %.1f ms\n", ep->name, ep->lid,
         ep->qp->qp_num, completed, sends, o->min_size, o->max_size, to, failed, elapsed * 1e3);
  return completed == sends && !failed ? 0 : -1;
}

/* ---- the roles ------------------------------------------------------------ */

/* Device `name`, or the first one if `name` is NULL. */
static struct ibv_device *find_device(struct ibv_device **list, int n, const char *name) {
  for (int i = 0; i < n; ++i)
    if (!name || strcmp(ibv_get_device_name(list[i]), name) == 0) return list[i];
  fail("--device", "no such device");
  return NULL;
}

static size_t recv_slot(const struct options *o) { return GRH_BYTES + o->max_size; }

/* One receiver, on its own: "ready" once attached, then the summary. */
static int run_recv(struct ibv_device *dev, const struct options *o) {
  struct endpoint ep = {.ctx = NULL};
  struct tally t = {.seen = calloc(o->count, 1)};
  int e = !t.seen || endpoint_open(&ep, dev, o->count, recv_slot(o), 1, o->count) || receiver_start(&ep, o);
  if (!e) {
    char mgid[INET6_ADDRSTRLEN];
    if (o->mode == MODE_MULTICAST)
      printf("ready: %s (LID %u QPN 0x%06x) attached to %s (MLID 0x%04x)\n", ep.name, ep.lid, ep.qp->qp_num,
             gid_text(&ep.group.mgid, mgid), ep.group.mlid);
    else
      printf("ready: %s (LID %u QPN 0x%06x) for unicast\n", ep.name, ep.lid, ep.qp->qp_num);
    fflush(stdout);
    e = receiver_finish(&ep, o, &t);
  }
  e |= endpoint_close(&ep);
  free(t.seen);
  return e;
}

static int run_send(struct ibv_device *dev, const struct options *o) {
  struct endpoint ep = {.ctx = NULL};
  int e = endpoint_open(&ep, dev, SEND_DEPTH, o->max_size, SEND_DEPTH, 1) || sender_run(&ep, o);
  e |= endpoint_close(&ep);
  return e;
}

/* Every role: the sender on `sender`, a receiver on each of --receivers;
 * with unicast, the sender sends to the receivers' QPs. */
static int run_all(struct ibv_device **list, int n, struct ibv_device *sender_dev, const struct options *o) {
  const unsigned nr = o->nreceivers;
  struct endpoint sender = {.ctx = NULL}, recv[MAX_PEERS];
  struct tally t[MAX_PEERS];
  struct options so = *o; /* the sender's: --to the receivers */
  memset(recv, 0, sizeof recv);
  memset(t, 0, sizeof t);
  int e = 0;
  for (unsigned i = 0; i < nr && !e; ++i) {
    struct ibv_device *dev = find_device(list, n, o->receivers[i]);
    e = !dev || !(t[i].seen = calloc(o->count, 1)) ||
        endpoint_open(&recv[i], dev, o->count, recv_slot(o), 1, o->count) || receiver_start(&recv[i], o);
    if (!e) so.to[i] = (struct peer){recv[i].lid, recv[i].qp->qp_num};
  }
  so.nto = nr;
  e = e || endpoint_open(&sender, sender_dev, SEND_DEPTH, o->max_size, SEND_DEPTH, 1);
  if (!e) {
    e = sender_run(&sender, &so);
    if (!e)
      for (unsigned i = 0; i < nr; ++i) e |= receiver_finish(&recv[i], o, &t[i]);
  }
  for (unsigned i = 0; i < nr; ++i) {
    e |= endpoint_close(&recv[i]);
    free(t[i].seen);
  }
  e |= endpoint_close(&sender);
  return e;
}

/* ---- main ----------------------------------------------------------------- */

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--role all|send|recv] [--mode multicast|unicast] [--count N] [--size MIN[-MAX]]\n"
          "          [--device NAME] [--receivers NAME,NAME...] [--to LID:QPN,LID:QPN...]\n"
          "          [--mgid GID] [--timeout SECONDS]\n",
          argv0);
  return 2;
}

/* Splits a comma-separated list in place into at most MAX_PEERS items;
 * their number, or 0 if there are more. */
static unsigned split_list(char *text, char *items[MAX_PEERS]) {
  unsigned n = 0;
  for (char *item = strtok(text, ","); item; item = strtok(NULL, ",")) {
    if (n == MAX_PEERS) return 0;
    items[n++] = item;
  }
  return n;
}

/* "LID:QPN,LID:QPN..." (numbers in C notation: 0x for hex). */
static int parse_peers(char *text, struct options *o) {
  char *items[MAX_PEERS];
  o->nto = split_list(text, items);
  for (unsigned i = 0; i < o->nto; ++i) {
    char *end;
    const unsigned long lid = strtoul(items[i], &end, 0);
    if (*end != ':' || !lid || lid > 0xbfff) return -1;
    const unsigned long qpn = strtoul(end + 1, &end, 0);
    if (*end || !qpn || qpn >= 0xffffff) return -1;
    o->to[i] = (struct peer){(uint16_t)lid, (uint32_t)qpn};
  }
  return o->nto ? 0 : -1;
}

static int parse(int argc, char **argv, struct options *o) {
  static char default_receivers[] = "ibfab1,ibfab2";
  char *receivers = default_receivers;
  *o = (struct options){.role = ROLE_ALL, .count = 1000, .min_size = 64, .max_size = 64, .timeout_s = 30};
  inet_pton(AF_INET6, "ff15:1234::fa:1", o->mgid.raw);
  for (int i = 1; i < argc; i += 2) {
    const char *key = argv[i];
    char *value = i + 1 < argc ? argv[i + 1] : NULL, *end;
    if (!value) return -1;
    if (!strcmp(key, "--role")) {
      if (!strcmp(value, "all")) o->role = ROLE_ALL;
      else if (!strcmp(value, "send")) o->role = ROLE_SEND;
      else if (!strcmp(value, "recv")) o->role = ROLE_RECV;
      else return -1;
    } else if (!strcmp(key, "--mode")) {
      if (!strcmp(value, "multicast")) o->mode = MODE_MULTICAST;
      else if (!strcmp(value, "unicast")) o->mode = MODE_UNICAST;
      else return -1;
    } else if (!strcmp(key, "--count")) o->count = (unsigned)strtoul(value, NULL, 0);
    else if (!strcmp(key, "--size")) {
      o->min_size = o->max_size = (unsigned)strtoul(value, &end, 0);
      if (*end == '-') o->max_size = (unsigned)strtoul(end + 1, &end, 0);
      if (*end) return -1;
    } else if (!strcmp(key, "--timeout")) o->timeout_s = (unsigned)strtoul(value, NULL, 0);
    else if (!strcmp(key, "--device")) o->device = value;
    else if (!strcmp(key, "--receivers")) receivers = value;
    else if (!strcmp(key, "--to")) {
      if (parse_peers(value, o)) return -1;
    } else if (!strcmp(key, "--mgid")) {
      if (inet_pton(AF_INET6, value, o->mgid.raw) != 1 || o->mgid.raw[0] != 0xff) return -1;
    } else return -1;
  }
  o->nreceivers = split_list(receivers, o->receivers);
  if (o->role == ROLE_SEND && o->mode == MODE_UNICAST && !o->nto) return -1;
  return o->count && o->nreceivers && o->min_size >= 4 && o->min_size <= o->max_size ? 0 : -1;
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
  } else {
    struct ibv_device *dev = find_device(list, n, o->device);
    if (dev && o->role == ROLE_ALL) e = run_all(list, n, dev, o);
    else if (dev) e = o->role == ROLE_SEND ? run_send(dev, o) : run_recv(dev, o);
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
