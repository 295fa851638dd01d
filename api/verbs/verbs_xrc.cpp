// XRC (eXtended Reliable Connected): domains, XRC SRQs and the creation
// attributes of XRC's half QPs, as rdma-core's verbs and the kernel's
// uverbs give them.
//
// A domain opened with a file is the host's domain of that file's inode on
// the device, shared by every process that opens the same file (the
// engine keys it by the inode; the file travels with the request), created
// with O_CREAT; opened with fd -1 it is the process's own. An XRC SRQ
// belongs to a domain and completes its receives on a CQ of its own,
// whichever target QP (XRC_RECV) the message came through; initiators
// (XRC_SEND) name it by its number (ibv_get_srq_num) in each send WR.
// ibv_open_qp (another process's target QP) is not offered: it fails with
// EOPNOTSUPP, as without a provider op.
#include <fcntl.h>

#include <cerrno>
#include <memory>

#include "api/client/verbs_protocol.h"
#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {

ibv_xrcd* open_xrcd_op(ibv_context* context, ibv_xrcd_init_attr* attr) {
  if (!context || !attr) return fail_null<ibv_xrcd>(EINVAL);
  if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) return fail_null<ibv_xrcd>(EOPNOTSUPP);
  // rdma-core's ibv_cmd_open_xrcd wants both, whatever their values.
  if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS))
    return fail_null<ibv_xrcd>(EINVAL);
  api::OpenXrcd req;
  req.oflags = static_cast<uint32_t>(attr->oflags);
  req.has_file = attr->fd != -1;
  if (req.has_file && ::fcntl(attr->fd, F_GETFD) < 0) return fail_null<ibv_xrcd>(EBADF);
  const int give[] = {attr->fd};
  const int64_t h = Context::from(context)->link.request(api::MsgType::OpenXrcd, &req, sizeof req,
                                                         req.has_file ? std::span<const int>(give)
                                                                      : std::span<const int>());
  if (h < 0) return fail_null<ibv_xrcd>(static_cast<int>(-h));
  auto x = std::make_unique<Xrcd>();
  x->xrcd.context = context;
  x->handle = static_cast<uint32_t>(h);
  return &x.release()->xrcd;
}

int close_xrcd_op(ibv_xrcd* xrcd) {
  if (!xrcd) return EINVAL;
  Xrcd* x = Xrcd::from(xrcd);
  const api::DestroyObject req{x->handle};
  if (const int64_t e = Context::from(xrcd->context)->link.request(api::MsgType::CloseXrcd, &req, sizeof req))
    return static_cast<int>(-e);
  delete x;
  return 0;
}

ibv_srq* create_srq_ex_op(ibv_context* context, ibv_srq_init_attr_ex* attr) {
  if (!context || !attr) return fail_null<ibv_srq>(EINVAL);
  constexpr uint32_t kKnown =
      IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
  if (attr->comp_mask & ~kKnown) return fail_null<ibv_srq>(EOPNOTSUPP);  // tag matching
  const ibv_srq_type type = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? attr->srq_type : IBV_SRQT_BASIC;
  if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) return fail_null<ibv_srq>(EOPNOTSUPP);
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd || attr->pd->context != context)
    return fail_null<ibv_srq>(EINVAL);
  if (type == IBV_SRQT_BASIC) return make_srq(attr->pd, attr->attr, attr->srq_context, nullptr, nullptr);
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->xrcd ||
      !attr->cq || attr->xrcd->context != context || attr->cq->context != context)
    return fail_null<ibv_srq>(EINVAL);
  return make_srq(attr->pd, attr->attr, attr->srq_context, Xrcd::from(attr->xrcd), attr->cq);
}

int get_srq_num_op(ibv_srq* srq, uint32_t* srq_num) {
  if (!srq || !srq_num) return EINVAL;
  // Any SRQ's number, as mlx5 gives it; only an XRC SRQ's is named by initiators.
  *srq_num = Srq::from(srq)->srq_num;
  return 0;
}

int xrc_qp_attr(ibv_context* context, ibv_qp_init_attr_ex& a) {
  a.srq = nullptr;
  a.cap.max_recv_wr = a.cap.max_recv_sge = 0;
  if (a.qp_type == IBV_QPT_XRC_SEND) {
    // A send queue on a PD; no receive queue, so no receive CQ.
    if (!(a.comp_mask & IBV_QP_INIT_ATTR_PD) || !a.pd || !a.send_cq) return EINVAL;
    a.recv_cq = a.send_cq;
    return 0;
  }
  // XRC_RECV: its domain only; it sends nothing but responses.
  if (!(a.comp_mask & IBV_QP_INIT_ATTR_XRCD) || !a.xrcd || a.xrcd->context != context) return EINVAL;
  a.cap = ibv_qp_cap{};
  a.pd = nullptr;
  a.send_cq = a.recv_cq = nullptr;
  return 0;
}

}  // namespace ibfab::verbs
