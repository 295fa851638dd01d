// Queue pairs: creation (the rings, shared with the engine), the state
// machine with the masks each transition needs (qp_transitions.h), queries,
// and multicast attach/detach as ibv_attach_mcast(3) and
// ibv_detach_mcast(3) describe them.
//
// UD QPs are the engine's UD QPs; RC and UC QPs are connected QPs of the
// HCA model, their attributes passed to it at each transition.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "api/client/verbs_protocol.h"
#include "api/verbs/export.h"
#include "api/verbs/qp_transitions.h"
#include "api/verbs/verbs_internal.h"

using namespace ibfab;
using namespace ibfab::verbs;
using api::rings::ConnectedWqe;
using api::rings::QpRings;
using api::rings::RecvWqe;
using api::rings::RingSge;
using api::rings::SendWqe;

namespace ibfab::verbs {
namespace {

// Takes the QP's completions not yet polled off its CQs, as mlx5 does on
// RESET and destroy (an XRC target has no CQs: its receives complete on
// its SRQs').
void clean_cqs(Qp& qp) {
  const uint32_t qpn = qp.qp()->qp_num;
  if (qp.rcq) clean_cq(*qp.rcq, qpn, qp.srq);
  if (qp.scq && qp.scq != qp.rcq) clean_cq(*qp.scq, qpn, nullptr);
}

constexpr uint64_t kSupportedCreateFlags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;

ibv_qp* create_qp(ibv_context* context, const ibv_qp_init_attr_ex& given) {
  if (!context) return fail_null<ibv_qp>(EINVAL);
  if (given.comp_mask & ~static_cast<uint32_t>(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
                                                IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
    return fail_null<ibv_qp>(EOPNOTSUPP);
  ibv_qp_init_attr_ex a = given;
  if (a.qp_type == IBV_QPT_XRC_SEND || a.qp_type == IBV_QPT_XRC_RECV) {
    // XRC's half QPs (verbs_xrc.cpp): an initiator has a send queue only,
    // a target nothing of its own but its domain.
    if (const int e = xrc_qp_attr(context, a)) return fail_null<ibv_qp>(e);
  }
  const bool target = a.qp_type == IBV_QPT_XRC_RECV;  // no PD, CQs nor queues
  if (!target && (!a.pd || !a.send_cq || !a.recv_cq)) return fail_null<ibv_qp>(EINVAL);
  if ((a.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && (a.create_flags & ~kSupportedCreateFlags))
    return fail_null<ibv_qp>(EOPNOTSUPP);
  if (a.qp_type != IBV_QPT_UD && a.qp_type != IBV_QPT_RC && a.qp_type != IBV_QPT_UC &&
      a.qp_type != IBV_QPT_XRC_SEND && a.qp_type != IBV_QPT_XRC_RECV)
    return fail_null<ibv_qp>(EOPNOTSUPP);
  const bool connected = a.qp_type != IBV_QPT_UD;
  if (a.srq && (!connected || a.srq->context != context)) return fail_null<ibv_qp>(a.srq ? EINVAL : EOPNOTSUPP);
  if (!target && (a.send_cq->context != context || a.recv_cq->context != context || a.pd->context != context))
    return fail_null<ibv_qp>(EINVAL);
  const ibv_qp_cap& cap = a.cap;
  if (cap.max_send_wr > kMaxQpWr || cap.max_recv_wr > kMaxQpWr || cap.max_send_sge > kMaxSge ||
      cap.max_recv_sge > kMaxSge || cap.max_inline_data > kMaxInline)
    return fail_null<ibv_qp>(EINVAL);
  auto qp = std::make_unique<Qp>();
  if (a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
    if (const int e = enable_wr_api(*qp, a.qp_type, a.send_ops_flags)) return fail_null<ibv_qp>(e);
  qp->sq_depth = api::rings::ring_depth(std::max(cap.max_send_wr, 1u));
  qp->rq_depth = api::rings::ring_depth(std::max(cap.max_recv_wr, 1u));
  qp->cap = cap;
  qp->cap.max_send_wr = qp->sq_depth;
  qp->cap.max_recv_wr = qp->rq_depth;
  qp->cap.max_send_sge = std::max(cap.max_send_sge, 1u);
  qp->cap.max_recv_sge = std::max(cap.max_recv_sge, 1u);
  qp->cap.max_inline_data = kMaxInline;
  if (a.srq) {  // no receive queue of its own
    qp->srq = Srq::from(a.srq);
    qp->rq_depth = 1;
    qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;
  }
  if (a.qp_type == IBV_QPT_XRC_SEND || target) qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;  // no RQ
  if (target) qp->cap.max_send_wr = qp->cap.max_send_sge = qp->cap.max_inline_data = 0;
  if (connected) {  // a WQE and its SGEs or inline bytes; a receive WQE and its SGEs
    const uint32_t follow = std::max<uint32_t>(qp->cap.max_send_sge * sizeof(RingSge), kMaxInline);
    qp->sq_slot = (static_cast<uint32_t>(sizeof(ConnectedWqe)) + follow + 63) & ~63u;
    qp->rq_slot = static_cast<uint32_t>(sizeof(RecvWqe) + qp->cap.max_recv_sge * sizeof(RingSge));
  } else {
    qp->sq_slot = sizeof(SendWqe) + api::rings::kMaxUdPayload;
    qp->rq_slot = api::rings::kGrhBytes + api::rings::kMaxUdPayload;
  }
  qp->sq_sig_all = a.sq_sig_all != 0;
  qp->scq = target ? nullptr : Cq::from(a.send_cq);
  qp->rcq = target ? nullptr : Cq::from(a.recv_cq);
  qp->rwr.resize(qp->rq_depth);
  if (const int e = qp->mem.create(QpRings::bytes(qp->sq_depth, qp->sq_slot, qp->rq_depth, qp->rq_slot), "ibfab-qp"))
    return fail_null<ibv_qp>(-e);
  qp->rings = new (qp->mem.data()) QpRings;
  api::CreateQp req;
  req.send_cq = qp->scq ? qp->scq->handle : 0;
  req.recv_cq = qp->rcq ? qp->rcq->handle : 0;
  req.sq_depth = qp->sq_depth;
  req.rq_depth = qp->rq_depth;
  req.sq_slot = qp->sq_slot;
  req.rq_slot = qp->rq_slot;
  req.sq_sig_all = qp->sq_sig_all;
  req.block_self_mcast_lb = (a.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
                            (a.create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
  req.qp_type = static_cast<uint8_t>(a.qp_type);
  req.user_handle = reinterpret_cast<uint64_t>(qp.get());
  req.pd = a.pd ? a.pd->handle : 0;
  req.max_send_sge = qp->cap.max_send_sge;
  req.max_recv_sge = qp->cap.max_recv_sge;
  req.max_inline_data = qp->cap.max_inline_data;
  req.srq = a.srq ? a.srq->handle : 0;
  if (a.qp_type == IBV_QPT_XRC_RECV) {
    qp->xrcd = Xrcd::from(given.xrcd);
    req.xrcd = qp->xrcd->handle;
  }
  const int give[] = {qp->mem.fd()};
  const int64_t qpn = Context::from(context)->link.request(api::MsgType::CreateQp, &req, sizeof req, give);
  if (qpn < 0) return fail_null<ibv_qp>(static_cast<int>(-qpn));
  ibv_qp& q = *qp->qp();
  q.context = context;
  q.qp_context = a.qp_context;
  // An XRC target keeps the PD it was given, as libibverbs copies it
  // (librdmacm's ids take their PD from their QP), though it uses none.
  q.pd = given.qp_type != IBV_QPT_XRC_RECV || (given.comp_mask & IBV_QP_INIT_ATTR_PD) ? given.pd : nullptr;
  q.send_cq = given.qp_type == IBV_QPT_XRC_RECV ? nullptr : a.send_cq;
  q.recv_cq = given.qp_type == IBV_QPT_UD || given.qp_type == IBV_QPT_RC || given.qp_type == IBV_QPT_UC
                  ? a.recv_cq
                  : nullptr;
  q.srq = a.srq;
  q.handle = static_cast<uint32_t>(qpn);
  q.qp_num = static_cast<uint32_t>(qpn);
  q.state = IBV_QPS_RESET;
  q.qp_type = a.qp_type;
  pthread_mutex_init(&q.mutex, nullptr);
  pthread_cond_init(&q.cond, nullptr);
  qp->attr.qp_state = IBV_QPS_RESET;
  qp->attr.cap = qp->cap;
  return qp.release()->qp();
}

// Checks the attribute values a transition brings (the mask is checked
// by transition_ok).
int check_values(Context& c, const ibv_qp_attr& attr, int mask) {
  if (mask & IBV_QP_PORT) {
    const std::optional<api::NodeReply> n = query_node(c);
    if (!n || !port_of(*n, attr.port_num)) return EINVAL;
  }
  if ((mask & IBV_QP_PKEY_INDEX) && attr.pkey_index >= api::kMaxPkeys) return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > IBV_MTU_4096)) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && attr.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && attr.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_TIMEOUT) && attr.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && attr.min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr.max_rd_atomic > kMaxRdAtomic) return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr.max_dest_rd_atomic > kMaxRdAtomic) return EINVAL;
  return 0;
}

// The attributes of an RC or UC QP's transition, for the engine.
void connected_attributes(const ibv_qp_attr& attr, int mask, api::ModifyQp& m) {
  m.mask = static_cast<uint32_t>(mask);
  m.access = attr.qp_access_flags;
  m.rq_psn = attr.rq_psn & 0xFFFFFF;
  m.sq_psn = attr.sq_psn & 0xFFFFFF;
  m.dest_qp_num = attr.dest_qp_num & 0xFFFFFF;
  // Only when named: a C caller leaves the fields it does not name in the
  // mask as they were (ibv_xsrq_pingpong: garbage), and this one is an enum.
  m.path_mtu = (mask & IBV_QP_PATH_MTU) ? static_cast<uint8_t>(attr.path_mtu) : 0;
  m.timeout = attr.timeout;
  m.retry_cnt = attr.retry_cnt;
  m.rnr_retry = attr.rnr_retry;
  m.max_rd_atomic = attr.max_rd_atomic;
  m.max_dest_rd_atomic = attr.max_dest_rd_atomic;
  m.min_rnr_timer = attr.min_rnr_timer;
  const ibv_ah_attr& ah = attr.ah_attr;
  m.dlid = ah.dlid;
  m.sl = ah.sl;
  m.src_path_bits = ah.src_path_bits;
  m.is_global = ah.is_global;
  if (ah.is_global) {
    std::memcpy(m.dgid, ah.grh.dgid.raw, 16);
    m.sgid_index = ah.grh.sgid_index;
    m.hop_limit = ah.grh.hop_limit;
    m.traffic_class = ah.grh.traffic_class;
    m.flow_label = ah.grh.flow_label;
  }
}

}  // namespace

ibv_qp* create_qp_ex_op(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  if (!attr) return fail_null<ibv_qp>(EINVAL);
  ibv_qp* q = create_qp(context, *attr);
  if (q) attr->cap = Qp::from(q)->cap;
  return q;
}

}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (!pd || !attr) return fail_null<ibv_qp>(EINVAL);
  ibv_qp_init_attr_ex ex{};
  ex.qp_context = attr->qp_context;
  ex.send_cq = attr->send_cq;
  ex.recv_cq = attr->recv_cq;
  ex.srq = attr->srq;
  ex.cap = attr->cap;
  ex.qp_type = attr->qp_type;
  ex.sq_sig_all = attr->sq_sig_all;
  ex.comp_mask = IBV_QP_INIT_ATTR_PD;
  ex.pd = pd;
  ibv_qp* q = create_qp(pd->context, ex);
  if (q) attr->cap = Qp::from(q)->cap;
  return q;
}

// Only QPs created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS have the ibv_wr_*
// interface; for the others NULL, errno untouched, as rdma-core answers.
IBFAB_VERBS_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* q) {
  return q && Qp::from(q)->extended ? &Qp::from(q)->qpx : nullptr;
}

IBFAB_VERBS_EXPORT int ibv_modify_qp(ibv_qp* q, ibv_qp_attr* attr, int mask) {
  if (!q || !attr) return fail(EINVAL);
  Qp& qp = *Qp::from(q);
  Context& c = *Context::from(q->context);
  const ibv_qp_state cur = qp.state();
  const ibv_qp_state next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
  if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) return fail(EINVAL);
  if (!transition_ok(q->qp_type, cur, next, mask)) return fail(EINVAL);
  if (const int e = check_values(c, *attr, mask)) return fail(e);
  api::ModifyQp m;
  m.qp_num = q->qp_num;
  m.state = static_cast<uint8_t>(next);
  m.set_qkey = (mask & IBV_QP_QKEY) != 0;
  m.qkey = attr->qkey;
  m.set_port = (mask & IBV_QP_PORT) != 0;
  m.port = attr->port_num;
  m.set_pkey_index = (mask & IBV_QP_PKEY_INDEX) != 0;
  m.pkey_index = attr->pkey_index;
  if (qp.connected()) connected_attributes(*attr, mask, m);
  if (next == IBV_QPS_RESET) {
    // The engine leaves the rings alone in RESET; posted work is forgotten.
    std::scoped_lock lock(qp.sq_mu, qp.rq_mu);
    if (const int64_t e = c.link.request(api::MsgType::ModifyQp, &m, sizeof m)) return fail(static_cast<int>(-e));
    qp.sq_head = qp.rq_posted = 0;
    qp.rq_done.store(0);
    qp.sq_done.store(0);
    qp.rings->sq_head.value.store(0, std::memory_order_release);
    qp.rings->rq_posted.value.store(0, std::memory_order_release);
    // Its completions not yet polled go too: they name WQEs that are gone.
    clean_cqs(qp);
  } else if (const int64_t e = c.link.request(api::MsgType::ModifyQp, &m, sizeof m)) {
    return fail(static_cast<int>(-e));
  }
  ibv_qp_attr& s = qp.attr;
  s.qp_state = next;
  if (mask & IBV_QP_QKEY) s.qkey = attr->qkey;
  if (mask & IBV_QP_PORT) s.port_num = attr->port_num;
  if (mask & IBV_QP_PKEY_INDEX) s.pkey_index = attr->pkey_index;
  if (mask & IBV_QP_SQ_PSN) s.sq_psn = attr->sq_psn & 0xFFFFFF;
  if (mask & IBV_QP_RQ_PSN) s.rq_psn = attr->rq_psn & 0xFFFFFF;
  if (mask & IBV_QP_ACCESS_FLAGS) s.qp_access_flags = attr->qp_access_flags;
  if (mask & IBV_QP_AV) s.ah_attr = attr->ah_attr;
  if (mask & IBV_QP_PATH_MTU) s.path_mtu = attr->path_mtu;
  if (mask & IBV_QP_DEST_QPN) s.dest_qp_num = attr->dest_qp_num;
  if (mask & IBV_QP_TIMEOUT) s.timeout = attr->timeout;
  if (mask & IBV_QP_RETRY_CNT) s.retry_cnt = attr->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) s.rnr_retry = attr->rnr_retry;
  if (mask & IBV_QP_MIN_RNR_TIMER) s.min_rnr_timer = attr->min_rnr_timer;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) s.max_rd_atomic = attr->max_rd_atomic;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) s.max_dest_rd_atomic = attr->max_dest_rd_atomic;
  q->state = next;
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_query_qp(ibv_qp* q, ibv_qp_attr* attr, int, ibv_qp_init_attr* init_attr) {
  if (!q || !attr || !init_attr) return fail(EINVAL);
  Qp& qp = *Qp::from(q);
  *attr = qp.attr;
  attr->qp_state = attr->cur_qp_state = qp.state();
  q->state = attr->qp_state;
  attr->cap = qp.cap;
  attr->path_mtu = qp.attr.path_mtu ? qp.attr.path_mtu : IBV_MTU_4096;
  std::memset(init_attr, 0, sizeof *init_attr);
  init_attr->qp_context = q->qp_context;
  init_attr->send_cq = q->send_cq;
  init_attr->recv_cq = q->recv_cq;
  init_attr->srq = q->srq;
  init_attr->cap = qp.cap;
  init_attr->qp_type = q->qp_type;
  init_attr->sq_sig_all = qp.sq_sig_all;
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_destroy_qp(ibv_qp* q) {
  if (!q) return fail(EINVAL);
  const api::DestroyObject req{q->qp_num};
  if (const int64_t e = Context::from(q->context)->link.request(api::MsgType::DestroyQp, &req, sizeof req))
    return fail(static_cast<int>(-e));
  Qp& qp = *Qp::from(q);
  clean_cqs(qp);
  pthread_mutex_destroy(&q->mutex);
  pthread_cond_destroy(&q->cond);
  delete Qp::from(q);
  return 0;
}

namespace {

// ibv_attach_mcast(3) / ibv_detach_mcast(3): UD QPs only, multicast GIDs
// only; the errno value is returned.
int mcast(ibv_qp* q, const ibv_gid* gid, uint16_t lid, api::MsgType type) {
  if (!q || !gid) return EINVAL;
  if (q->qp_type != IBV_QPT_UD || gid->raw[0] != 0xFF) return EINVAL;
  api::McastRequest m;
  m.qp_num = q->qp_num;
  m.lid = lid;
  std::memcpy(m.gid, gid->raw, 16);
  const int64_t e = Context::from(q->context)->link.request(type, &m, sizeof m);
  return e < 0 ? static_cast<int>(-e) : 0;
}

}  // namespace

IBFAB_VERBS_EXPORT int ibv_attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  const int e = mcast(qp, gid, lid, api::MsgType::AttachMcast);
  return e ? fail(e) : 0;
}

IBFAB_VERBS_EXPORT int ibv_detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  const int e = mcast(qp, gid, lid, api::MsgType::DetachMcast);
  return e ? fail(e) : 0;
}
