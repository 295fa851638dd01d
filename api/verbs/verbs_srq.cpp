// Shared receive queues, for RC and UC QPs (and XRC SRQs, verbs_xrc.cpp):
// the engine's SRQ in the HCA model, fed through a ring (verbs_rings.h) as
// a QP's receives are. The
// limit (ibv_modify_srq IBV_SRQ_LIMIT) fires IBV_EVENT_SRQ_LIMIT_REACHED
// once, as on hardware; resizing (IBV_SRQ_MAX_WR) is refused, as mlx5
// refuses it.
#include <algorithm>
#include <cerrno>
#include <memory>
#include <new>

#include "api/client/verbs_protocol.h"
#include "api/verbs/export.h"
#include "api/verbs/verbs_internal.h"

using namespace ibfab;
using namespace ibfab::verbs;
using api::rings::QpRings;
using api::rings::RecvWqe;
using api::rings::RingSge;

namespace ibfab::verbs {

ibv_srq* make_srq(ibv_pd* pd, ibv_srq_attr& a, void* srq_context, Xrcd* xrcd, ibv_cq* cq) {
  if (a.max_wr == 0 || a.max_wr > kMaxQpWr || a.max_sge > kMaxSge) return fail_null<ibv_srq>(EINVAL);
  auto srq = std::make_unique<Srq>();
  srq->depth = api::rings::ring_depth(a.max_wr);
  srq->max_sge = std::max(a.max_sge, 1u);
  srq->slot = static_cast<uint32_t>(sizeof(RecvWqe) + srq->max_sge * sizeof(RingSge));
  if (const int e = srq->mem.create(QpRings::bytes(0, 0, srq->depth, srq->slot), "ibfab-srq"))
    return fail_null<ibv_srq>(-e);
  srq->rings = new (srq->mem.data()) QpRings;
  api::CreateSrq req;
  req.pd = pd->handle;
  req.depth = srq->depth;
  req.max_sge = srq->max_sge;
  req.slot = srq->slot;
  req.user_handle = reinterpret_cast<uint64_t>(srq.get());
  if (xrcd) {
    req.xrcd = xrcd->handle;
    req.cq = Cq::from(cq)->handle;
  }
  const int give[] = {srq->mem.fd()};
  const int64_t h = Context::from(pd->context)->link.request(api::MsgType::CreateSrq, &req, sizeof req, give);
  if (h < 0) return fail_null<ibv_srq>(static_cast<int>(-h));
  ibv_srq& s = srq->srq;
  s.context = pd->context;
  s.srq_context = srq_context;
  s.pd = pd;
  s.handle = static_cast<uint32_t>(h);
  srq->srq_num = static_cast<uint32_t>(h >> 32) & 0xFFFFFF;
  if (xrcd) {
    srq->type = IBV_SRQT_XRC;
    srq->xrcd = xrcd;
  }
  pthread_mutex_init(&s.mutex, nullptr);
  pthread_cond_init(&s.cond, nullptr);
  a.max_wr = srq->depth;
  a.max_sge = srq->max_sge;
  return &srq.release()->srq;
}

}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
  if (!pd || !attr) return fail_null<ibv_srq>(EINVAL);
  return make_srq(pd, attr->attr, attr->srq_context, nullptr, nullptr);
}

IBFAB_VERBS_EXPORT int ibv_modify_srq(ibv_srq* s, ibv_srq_attr* attr, int mask) {
  if (!s || !attr) return EINVAL;
  Srq& srq = *Srq::from(s);
  if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
  if (mask & IBV_SRQ_MAX_WR) return EINVAL;  // mlx5 cannot resize an SRQ
  if (!(mask & IBV_SRQ_LIMIT)) return 0;
  if (attr->srq_limit > srq.depth) return EINVAL;
  const api::ModifySrq req{s->handle, attr->srq_limit};
  if (const int64_t e = Context::from(s->context)->link.request(api::MsgType::ModifySrq, &req, sizeof req))
    return static_cast<int>(-e);
  srq.limit = attr->srq_limit;
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_query_srq(ibv_srq* s, ibv_srq_attr* attr) {
  if (!s || !attr) return EINVAL;
  const Srq& srq = *Srq::from(s);
  attr->max_wr = srq.depth;
  attr->max_sge = srq.max_sge;
  attr->srq_limit = srq.limit;
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_destroy_srq(ibv_srq* s) {
  if (!s) return EINVAL;
  const api::DestroyObject req{s->handle};
  if (const int64_t e = Context::from(s->context)->link.request(api::MsgType::DestroySrq, &req, sizeof req))
    return static_cast<int>(-e);
  pthread_mutex_destroy(&s->mutex);
  pthread_cond_destroy(&s->cond);
  delete Srq::from(s);
  return 0;
}
