#include "api/server/verbs_srq.h"

#include <infiniband/verbs.h>

#include "api/server/verbs_context.h"
#include "api/server/verbs_receive_ring.h"

namespace ibfab::api {

uint32_t VerbsService::SharedRq::create() {
  srqn_ = ctx_.hca().create_srq(req_.pd, req_.depth, req_.max_sge, this);
  return srqn_;
}

bool VerbsService::SharedRq::run() {
  if (broken_) return false;
  const int r = take_receive_ring(rings_, taken_, 0, 0, req_.depth, req_.slot, req_.max_sge, sges_,
                                  [this](const fabric::RecvWr& w) { return ctx_.hca().post_srq_recv(srqn_, w); });
  if (r < 0) {
    broken_ = true;
    ctx_.object_event(IBV_EVENT_SRQ_ERR, req_.user_handle);
  }
  return r != 0;
}

void VerbsService::SharedRq::on_qp_event(uint8_t event) {
  ctx_.object_event(static_cast<ibv_event_type>(event), req_.user_handle);
}

}  // namespace ibfab::api
