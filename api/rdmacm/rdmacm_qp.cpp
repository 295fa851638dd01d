// Queue pairs and shared receive queues on an id's device. A UD QP goes
// straight to RTS with what the engine's CmInitQpAttr gives for INIT (Q_Key,
// P_Key index, port); with no CQs given, the id gets its own, with
// completion channels and cq_context = the id (rdma_verbs.h relies on it).
// An XRC target id's QP and XRC SRQ are in the device's XRC domain unless
// given one; the SRQ completes on a receive CQ of the id's (which replaces
// any the QP made, as in rdma-core, and stays until the SRQ goes).
#include <infiniband/verbs.h>

#include <rdma/rdma_verbs.h>

#include <cerrno>
#include <cstring>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// ibv_modify_qp's result (an errno) as -1 with errno, like rdma_seterrno.
int modify(ibv_qp* qp, ibv_qp_attr& attr, int mask) {
  const int e = ibv_modify_qp(qp, &attr, mask);
  return e ? fail(e) : 0;
}

// Destroys a receive and a send object that may be one and the same.
template <class T>
void destroy_pair(T*& recv, T*& send, int (*destroy)(T*)) {
  if (recv) destroy(recv);
  if (send && send != recv) destroy(send);
  recv = send = nullptr;
}

// The CQs and channels the library made for the id (the CQs first: a
// channel goes once no CQ uses it); none while an XRC target's SRQ uses them.
void destroy_cqs(rdma_cm_id& id) {
  if (id.qp_type == IBV_QPT_XRC_RECV && id.srq) return;
  destroy_pair(id.recv_cq, id.send_cq, ibv_destroy_cq);
  destroy_pair(id.recv_cq_channel, id.send_cq_channel, ibv_destroy_comp_channel);
}

// A CQ of `size` entries with a completion channel of its own and the id as
// its context; false (errno set) on failure.
bool make_cq(rdma_cm_id& id, uint32_t size, ibv_comp_channel*& channel, ibv_cq*& cq) {
  channel = ibv_create_comp_channel(id.verbs);
  if (channel) cq = ibv_create_cq(id.verbs, static_cast<int>(size), &id, channel, 0);
  return channel && cq;
}

// rdma-core's ucma_create_cqs: a receive CQ if `recv_size`, a send CQ if
// `send_size`.
int create_cqs(rdma_cm_id& id, uint32_t send_size, uint32_t recv_size) {
  if ((recv_size && !make_cq(id, recv_size, id.recv_cq_channel, id.recv_cq)) ||
      (send_size && !make_cq(id, send_size, id.send_cq_channel, id.send_cq))) {
    destroy_cqs(id);
    return -1;
  }
  return 0;
}

// INIT with the engine's attributes, then RTR, then RTS with SQ PSN 0.
int init_ud_qp(rdma_cm_id& id, ibv_qp* qp) {
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = IBV_QPS_INIT;
  if (rdma_init_qp_attr(&id, &attr, &mask) != 0) return -1;
  if (modify(qp, attr, mask) != 0) return -1;
  attr.qp_state = IBV_QPS_RTR;
  if (modify(qp, attr, IBV_QP_STATE) != 0) return -1;
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;
  return modify(qp, attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

// A connected QP only to INIT; the connection takes it further.
int init_conn_qp(rdma_cm_id& id, ibv_qp* qp) {
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = IBV_QPS_INIT;
  if (rdma_init_qp_attr(&id, &attr, &mask) != 0) return -1;
  return modify(qp, attr, mask);
}

// Destroys the id's QP or SRQ and the CQs the library made for the id.
template <class T>
void destroy_with_cqs(rdma_cm_id* id, T* rdma_cm_id::*object, int (*destroy)(T*)) {
  if (!id) return;
  if (id->*object) destroy(id->*object);
  id->*object = nullptr;
  destroy_cqs(*id);
}

// A call with basic attributes made through the extended one, as rdma-core
// makes them: `make` gets a copy extended with zeros (the extended struct
// starts with the basic one) and what it changes comes back.
template <class Ex, class Basic, class Make>
int through_ex(const rdma_cm_id* id, Basic* attr, Make make) {
  static_assert(sizeof(Ex) > sizeof(Basic));
  if (init() != 0) return -1;
  if (!id || !attr) return fail(EINVAL);
  Basic& basic = *attr;
  Ex ex{};
  std::memcpy(static_cast<void*>(&ex), &basic, sizeof basic);
  const int ret = make(ex);
  std::memcpy(static_cast<void*>(&basic), &ex, sizeof basic);
  return ret;
}

// rdma-core's init_ece: the QP's own ECE becomes the id's local one.
void take_local_ece(Id& id, ibv_qp* qp) {
  ibv_ece ece{};
  if (ibv_query_ece(qp, &ece) == 0) {
    id.local_ece.vendor_id = ece.vendor_id;
    id.local_ece.options = ece.options;
  }
}

}  // namespace

int qp_to_error(rdma_cm_id& id) {
  if (!id.qp) return 0;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  return modify(id.qp, attr, IBV_QP_STATE);
}

int qp_to_rtr(rdma_cm_id& id, uint8_t depth) {
  if (!id.qp) return 0;
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = IBV_QPS_INIT;  // again: the connection may allow more access than before
  if (rdma_init_qp_attr(&id, &attr, &mask) != 0 || modify(id.qp, attr, mask) != 0) return -1;
  attr.qp_state = IBV_QPS_RTR;
  if (rdma_init_qp_attr(&id, &attr, &mask) != 0) return -1;
  if (depth != RDMA_MAX_RESP_RES) attr.max_dest_rd_atomic = depth;
  return modify(id.qp, attr, mask);
}

int qp_to_rts(rdma_cm_id& id, uint8_t depth) {
  if (!id.qp) return 0;
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = IBV_QPS_RTS;
  if (rdma_init_qp_attr(&id, &attr, &mask) != 0) return -1;
  if (depth != RDMA_MAX_INIT_DEPTH) attr.max_rd_atomic = depth;
  return modify(id.qp, attr, mask);
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_init_qp_attr(rdma_cm_id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask) {
  if (init() != 0) return -1;
  if (!id || !qp_attr || !qp_attr_mask) return fail(EINVAL);
  const api::CmIdRequest req{Id::from(id)->handle, static_cast<uint32_t>(qp_attr->qp_state)};
  const api::CmReply r = request(api::MsgType::CmInitQpAttr, &req, sizeof req);
  if (r.value < 0) return fail(static_cast<int>(-r.value));
  // As ibv_copy_qp_attr_from_kern: every field from the answer.
  std::memset(qp_attr, 0, sizeof *qp_attr);
  qp_attr->qp_state = static_cast<ibv_qp_state>(r.info.qp_state);
  qp_attr->qkey = r.info.qkey;
  qp_attr->sq_psn = r.info.sq_psn;
  qp_attr->pkey_index = r.info.pkey_index;
  qp_attr->port_num = r.info.port;
  qp_attr->qp_access_flags = r.info.qp_access_flags;
  qp_attr->path_mtu = static_cast<ibv_mtu>(r.info.path_mtu);
  qp_attr->dest_qp_num = r.info.dest_qp_num;
  qp_attr->rq_psn = r.info.rq_psn;
  qp_attr->max_dest_rd_atomic = r.info.max_dest_rd_atomic;
  qp_attr->min_rnr_timer = r.info.min_rnr_timer;
  qp_attr->timeout = r.info.timeout;
  qp_attr->retry_cnt = r.info.retry_cnt;
  qp_attr->rnr_retry = r.info.rnr_retry;
  qp_attr->max_rd_atomic = r.info.max_rd_atomic;
  copy_ah(qp_attr->ah_attr, r.info.ah);
  *qp_attr_mask = static_cast<int>(r.info.qp_attr_mask);
  // As the kernel's rdma_init_qp_attr: an ACK timeout set on the id wins.
  if ((*qp_attr_mask & IBV_QP_TIMEOUT) && Id::from(id)->ack_timeout) qp_attr->timeout = *Id::from(id)->ack_timeout;
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
  if (init() != 0) return -1;
  if (!id || !attr || id->qp || !id->verbs) return fail(EINVAL);
  if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
    attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
    attr->pd = id->pd;
  } else if (attr->pd->context != id->verbs) {
    return fail(EINVAL);
  }
  if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
      (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
    return fail(EINVAL);
  if (id->qp_type == IBV_QPT_XRC_RECV && (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)) {
    attr->xrcd = device_xrcd(Id::from(id)->device);
    if (!attr->xrcd) return -1;
    attr->comp_mask |= IBV_QP_INIT_ATTR_XRCD;
  }
  if (create_cqs(*id, attr->send_cq || id->send_cq ? 0 : attr->cap.max_send_wr,
                 attr->recv_cq || id->recv_cq ? 0 : attr->cap.max_recv_wr) != 0)
    return -1;
  if (!attr->send_cq) attr->send_cq = id->send_cq;
  if (!attr->recv_cq) attr->recv_cq = id->recv_cq;
  if (id->srq && !attr->srq) attr->srq = id->srq;
  ibv_qp* qp = ibv_create_qp_ex(id->verbs, attr);
  if (!qp) {
    const int e = errno;
    destroy_cqs(*id);
    return fail(e);
  }
  take_local_ece(*Id::from(id), qp);
  if ((id->qp_type == IBV_QPT_UD ? init_ud_qp(*id, qp) : init_conn_qp(*id, qp)) != 0) {
    const int e = errno;
    ibv_destroy_qp(qp);
    destroy_cqs(*id);
    return fail(e);
  }
  id->pd = qp->pd;
  id->qp = qp;
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  return through_ex<ibv_qp_init_attr_ex>(id, qp_init_attr, [&](ibv_qp_init_attr_ex& ex) {
    ex.comp_mask = IBV_QP_INIT_ATTR_PD;
    ex.pd = pd ? pd : id->pd;
    return rdma_create_qp_ex(id, &ex);
  });
}

IBFAB_RDMACM_EXPORT void rdma_destroy_qp(rdma_cm_id* id) { destroy_with_cqs(id, &rdma_cm_id::qp, ibv_destroy_qp); }

// A basic or XRC SRQ on the id's device; an XRC one in the device's XRC
// domain and on a receive CQ of the id's unless given them.
IBFAB_RDMACM_EXPORT int rdma_create_srq_ex(rdma_cm_id* id, ibv_srq_init_attr_ex* attr) {
  if (init() != 0) return -1;
  if (!id || !attr || !id->verbs || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) return fail(EINVAL);
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
    attr->pd = id->pd;
    attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
  }
  bool made_cq = false;
  if (attr->srq_type == IBV_SRQT_XRC) {
    if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd) {
      attr->xrcd = device_xrcd(Id::from(id)->device);
      if (!attr->xrcd) return -1;
    }
    if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq) {
      if (create_cqs(*id, 0, attr->attr.max_wr) != 0) return -1;
      attr->cq = id->recv_cq;
      made_cq = true;
    }
    attr->comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
  }
  ibv_srq* srq = ibv_create_srq_ex(id->verbs, attr);
  if (!srq) {
    const int e = errno;
    if (made_cq) destroy_cqs(*id);  // as rdma-core: the id's CQs
    return fail(e);
  }
  if (!id->pd) id->pd = attr->pd;
  id->srq = srq;
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_create_srq(rdma_cm_id* id, ibv_pd* pd, ibv_srq_init_attr* attr) {
  return through_ex<ibv_srq_init_attr_ex>(id, attr, [&](ibv_srq_init_attr_ex& ex) {
    ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
    ex.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
    ex.pd = pd;
    return rdma_create_srq_ex(id, &ex);
  });
}

IBFAB_RDMACM_EXPORT void rdma_destroy_srq(rdma_cm_id* id) { destroy_with_cqs(id, &rdma_cm_id::srq, ibv_destroy_srq); }
