#include "api/server/verbs_srq.h"

#include <infiniband/verbs.h>

#include "api/server/verbs_context.h"
#include "api/server/verbs_cq.h"
#include "api/server/verbs_receive_ring.h"

namespace ibfab::api {

uint32_t VerbsService::SharedRq::create() {
  srqn_ = cq_ ? ctx_.hca().create_xrc_srq(model_xrcd_, req_.pd, req_.depth, req_.max_sge, this, this)
              : ctx_.hca().create_srq(req_.pd, req_.depth, req_.max_sge, this);
  return srqn_;
}

void VerbsService::SharedRq::on_recv_completion(const fabric::WorkCompletion& wc) {
  if (!cq_) return;  // an ordinary SRQ's go to the QP that took them
  rings::Cqe c = receive_cqe(wc);
  c.flags |= rings::Cqe::kXrcSrq;
  c.qp_handle = req_.user_handle;
  cq_->push(c, false);
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
