// Queue pairs and shared receive queues on an id's device. A UD QP goes
// straight to RTS with what the engine's CmInitQpAttr gives for INIT (Q_Key,
// P_Key index, port); with no CQs given, the id gets its own, with
// completion channels and cq_context = the id (rdma_verbs.h relies on it).
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

void destroy_cqs(rdma_cm_id& id) {
  if (id.recv_cq) {
    ibv_destroy_cq(id.recv_cq);
    if (id.send_cq && id.send_cq != id.recv_cq) ibv_destroy_cq(id.send_cq);
  } else if (id.send_cq) {
    ibv_destroy_cq(id.send_cq);
  }
  id.recv_cq = id.send_cq = nullptr;
  if (id.recv_cq_channel) {
    ibv_destroy_comp_channel(id.recv_cq_channel);
    if (id.send_cq_channel && id.send_cq_channel != id.recv_cq_channel) ibv_destroy_comp_channel(id.send_cq_channel);
  } else if (id.send_cq_channel) {
    ibv_destroy_comp_channel(id.send_cq_channel);
  }
  id.recv_cq_channel = id.send_cq_channel = nullptr;
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
  *qp_attr_mask = static_cast<int>(r.info.qp_attr_mask);
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
  if (init() != 0) return -1;
  if (!id || !qp_init_attr) return fail(EINVAL);
  ibv_qp_init_attr_ex attr{};
  std::memcpy(&attr, qp_init_attr, sizeof *qp_init_attr);
  attr.comp_mask = IBV_QP_INIT_ATTR_PD;
  attr.pd = pd ? pd : id->pd;
  const int ret = rdma_create_qp_ex(id, &attr);
  std::memcpy(qp_init_attr, &attr, sizeof *qp_init_attr);
  return ret;
}

IBFAB_RDMACM_EXPORT void rdma_destroy_qp(rdma_cm_id* id) {
  if (!id) return;
  if (id->qp) ibv_destroy_qp(id->qp);
  id->qp = nullptr;
  destroy_cqs(*id);
}

// A basic SRQ on the id's device; ibfab has no XRC (EOPNOTSUPP).
IBFAB_RDMACM_EXPORT int rdma_create_srq_ex(rdma_cm_id* id, ibv_srq_init_attr_ex* attr) {
  if (init() != 0) return -1;
  if (!id || !attr || !id->verbs || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) return fail(EINVAL);
  if (attr->srq_type == IBV_SRQT_XRC) return fail(EOPNOTSUPP);
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
    attr->pd = id->pd;
    attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
  }
  ibv_srq* srq = ibv_create_srq_ex(id->verbs, attr);
  if (!srq) return -1;
  if (!id->pd) id->pd = attr->pd;
  id->srq = srq;
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_create_srq(rdma_cm_id* id, ibv_pd* pd, ibv_srq_init_attr* attr) {
  if (init() != 0) return -1;
  if (!id || !attr) return fail(EINVAL);
  ibv_srq_init_attr_ex ex{};
  std::memcpy(&ex, attr, sizeof *attr);
  ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
  ex.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
  ex.pd = pd;
  const int ret = rdma_create_srq_ex(id, &ex);
  std::memcpy(attr, &ex, sizeof *attr);
  return ret;
}

IBFAB_RDMACM_EXPORT void rdma_destroy_srq(rdma_cm_id* id) {
  if (!id) return;
  if (id->srq) ibv_destroy_srq(id->srq);
  id->srq = nullptr;
  destroy_cqs(*id);
}
