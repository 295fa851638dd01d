// Memory windows (ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw), windows of
// the engine's HCA (its MemoryTable, verbs_protocol.h: AllocMw,
// DeallocMw). Type 1 windows are bound by ibv_bind_mw, type 2 by
// IBV_WR_BIND_MW work requests (ibv_post_send, ibv_wr_bind_mw); both
// binds are WQEs the HCA executes in order with the QP's other work, and
// complete as IBV_WC_BIND_MW. A window's handle is its first rkey: its
// slot in the table, whatever key later binds give it.
#include <cerrno>

#include "api/client/verbs_protocol.h"
#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {

ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) {
  if (!pd) return fail_null<ibv_mw>(EINVAL);
  if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) return fail_null<ibv_mw>(EINVAL);  // as the kernel refuses
  api::AllocMw req;
  req.pd = pd->handle;
  req.type = static_cast<uint32_t>(type);
  const int64_t rkey = Context::from(pd->context)->link.request(api::MsgType::AllocMw, &req, sizeof req);
  if (rkey < 0) return fail_null<ibv_mw>(static_cast<int>(-rkey));
  auto* mw = new ibv_mw{};
  mw->context = pd->context;
  mw->pd = pd;
  mw->rkey = static_cast<uint32_t>(rkey);
  mw->handle = static_cast<uint32_t>(rkey);
  mw->type = type;
  return mw;
}

// A bound window goes too (type 2 included): its key faults from then on.
int dealloc_mw(ibv_mw* mw) {
  if (!mw) return fail(EINVAL);
  const api::DestroyObject req{mw->handle};
  if (const int64_t e = Context::from(mw->context)->link.request(api::MsgType::DeallocMw, &req, sizeof req))
    return fail(static_cast<int>(-e));
  delete mw;
  return 0;
}

// mlx5's ibv_bind_mw (verbs.h has checked the window's type, a range
// without a region and the PDs): no zero-based window or region (EINVAL);
// the bind is an IBV_WR_BIND_MW to the key ibv_inc_rkey gives, which
// becomes mw->rkey once posted.
int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* mw_bind) {
  if (!qp || !mw || !mw_bind) return fail(EINVAL);
  const ibv_mw_bind_info& info = mw_bind->bind_info;
  if (info.mw_access_flags & IBV_ACCESS_ZERO_BASED) return fail(EINVAL);
  if (info.mr) {
    if (reinterpret_cast<const Mr*>(info.mr)->access & IBV_ACCESS_ZERO_BASED) return fail(EINVAL);
    if (info.mr->pd != mw->pd) return fail(EPERM);
  }
  ibv_send_wr wr{};
  wr.wr_id = mw_bind->wr_id;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = mw_bind->send_flags;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
  wr.bind_mw.bind_info = info;
  ibv_send_wr* bad = nullptr;
  if (const int e = post_send(qp, &wr, &bad)) return e;
  mw->rkey = wr.bind_mw.rkey;
  return 0;
}

}  // namespace ibfab::verbs
