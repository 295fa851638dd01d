#include "api/server/verbs_connected_qp.h"

#include <cstring>

#include "api/server/verbs_context.h"
#include "api/server/verbs_receive_ring.h"

namespace ibfab::api {

using rings::ConnectedWqe;
using rings::Cqe;
using rings::RingSge;

uint32_t VerbsService::ConnectedQp::create() {
  fabric::QpCaps caps;
  caps.max_send_wr = req_.sq_depth;
  caps.max_recv_wr = req_.rq_depth;
  caps.max_send_sge = req_.max_send_sge;
  caps.max_recv_sge = req_.max_recv_sge;
  caps.max_inline_data = req_.max_inline_data;
  if (req_.qp_type == IBV_QPT_XRC_RECV) return qpn_ = ctx_.hca().create_xrc_target_qp(model_xrcd_, this);
  const fabric::Transport t = req_.qp_type == IBV_QPT_RC   ? fabric::Transport::kRc
                              : req_.qp_type == IBV_QPT_UC ? fabric::Transport::kUc
                                                           : fabric::Transport::kXrcSend;
  qpn_ = ctx_.hca().create_connected_qp(t, req_.pd, caps, req_.srq, this, req_.sq_sig_all != 0);
  return qpn_;
}

int VerbsService::ConnectedQp::modify(const ModifyQp& m) {
  fabric::QpAttr a;
  a.state = static_cast<fabric::QpState>(m.state);
  a.access = m.access;
  a.pkey_index = m.pkey_index;
  a.port = m.port;
  a.path.dlid = m.dlid;
  a.path.sl = m.sl;
  a.path.src_path_bits = m.src_path_bits;
  a.path.global = m.is_global != 0;
  std::memcpy(a.path.dgid.data(), m.dgid, 16);
  a.path.sgid_index = m.sgid_index;
  a.path.hop_limit = m.hop_limit;
  a.path.traffic_class = m.traffic_class;
  a.path.flow_label = m.flow_label;
  a.path_mtu = m.path_mtu;
  a.timeout = m.timeout;
  a.retry_cnt = m.retry_cnt;
  a.rnr_retry = m.rnr_retry;
  a.rq_psn = m.rq_psn;
  a.max_rd_atomic = m.max_rd_atomic;
  a.min_rnr_timer = m.min_rnr_timer;
  a.sq_psn = m.sq_psn;
  a.max_dest_rd_atomic = m.max_dest_rd_atomic;
  a.dest_qp_num = m.dest_qp_num;
  if (m.state > IBV_QPS_ERR || ((m.mask & IBV_QP_PATH_MTU) && (m.path_mtu < IBV_MTU_256 || m.path_mtu > IBV_MTU_4096)))
    return EINVAL;
  if (const int e = ctx_.hca().modify_qp(qpn_, a, m.mask | fabric::qp_mask::kState)) return e;
  if (m.state == IBV_QPS_RESET) {  // the rings start again, as the client's side does
    sq_tail_ = rq_taken_ = 0;
    rings_->sq_tail.value.store(0, std::memory_order_release);
    rings_->rq_taken.value.store(0, std::memory_order_release);
  }
  sync_state();
  return 0;
}

void VerbsService::ConnectedQp::sync_state() {
  const fabric::QpState state = ctx_.hca().qp_state(qpn_);
  reset_ = state == fabric::QpState::kReset;
  rings_->state.value.store(static_cast<uint32_t>(state), std::memory_order_release);
}

void VerbsService::ConnectedQp::fatal() {
  fabric::QpAttr a;
  a.state = fabric::QpState::kError;
  (void)ctx_.hca().modify_qp(qpn_, a, fabric::qp_mask::kState);
  sync_state();
  ctx_.object_event(IBV_EVENT_QP_FATAL, req_.user_handle);
}

bool VerbsService::ConnectedQp::copy_sges(const uint8_t* slot, std::size_t header, uint32_t n, uint32_t max,
                                          uint32_t slot_size) {
  if (n > max || header + std::size_t{n} * sizeof(RingSge) > slot_size) return false;
  for (uint32_t i = 0; i < n; ++i) {
    RingSge r;
    std::memcpy(&r, slot + header + i * sizeof(RingSge), sizeof r);
    sges_[i] = {r.addr, r.length, r.lkey};
  }
  return true;
}

bool VerbsService::ConnectedQp::take_receives() {
  if (req_.srq != 0) return false;  // its receives come from the SRQ's ring
  const int r = take_receive_ring(rings_, rq_taken_, req_.sq_depth, req_.sq_slot, req_.rq_depth, req_.rq_slot,
                                  req_.max_recv_sge, sges_,
                                  [this](const fabric::RecvWr& w) { return ctx_.hca().post_recv(qpn_, w); });
  if (r < 0) fatal();
  return r != 0;
}

bool VerbsService::ConnectedQp::take_sends(uint64_t limit) {
  const uint32_t head = rings_->sq_head.value.load(std::memory_order_acquire);
  if (head == sq_tail_) return false;
  if (head - sq_tail_ > req_.sq_depth) {
    fatal();
    return true;
  }
  while (sq_tail_ != head) {
    const uint8_t* slot = rings_->send_slot(sq_tail_, req_.sq_depth, req_.sq_slot);
    ConnectedWqe w;
    std::memcpy(&w, slot, sizeof w);
    if (w.stamp >= limit) break;
    fabric::SendWr wr;
    wr.wr_id = sq_tail_;  // the completion names the ring entry; the application's wr_id is kept here
    wr.opcode = w.opcode;
    wr.flags = w.send_flags;
    wr.imm_data = w.imm_data;
    wr.invalidate_rkey = be32toh(w.imm_data);
    wr.remote_addr = w.remote_addr;
    wr.rkey = w.rkey;
    wr.compare_add = w.compare_add;
    wr.swap = w.swap;
    wr.remote_srqn = w.remote_srqn;
    if (w.opcode == IBV_WR_BIND_MW)  // verbs_rings.h: the bind's fields in the WQE's
      wr.bind = fabric::MwBind{w.rkey,
                               static_cast<uint8_t>(be32toh(w.imm_data)),
                               static_cast<uint32_t>(w.swap),
                               w.remote_addr,
                               w.compare_add,
                               static_cast<uint32_t>(w.swap >> 32)};
    bool fits = true;
    if (w.send_flags & IBV_SEND_INLINE) {
      fits = w.inline_length <= req_.max_inline_data && sizeof w + w.inline_length <= req_.sq_slot;
      if (fits) {
        inline_.assign(slot + sizeof w, slot + sizeof w + w.inline_length);
        wr.inline_data = inline_;
      }
    } else {
      fits = copy_sges(slot, sizeof w, w.num_sge, req_.max_send_sge, req_.sq_slot);
      wr.num_sge = w.num_sge;
      wr.sge = sges_.data();
    }
    if (!fits) {
      fatal();
      return true;
    }
    wr_ids_[sq_tail_ & (req_.sq_depth - 1)] = w.wr_id;
    const int e = ctx_.hca().post_send(qpn_, wr);
    if (e == ENOMEM) break;
    if (e != 0) {  // what the library refuses at the call
      fatal();
      return true;
    }
    rings_->sq_tail.value.store(++sq_tail_, std::memory_order_release);
  }
  return true;
}

bool VerbsService::ConnectedQp::run(uint64_t limit) {
  if (reset_) return false;
  bool work = take_receives();
  work |= take_sends(limit);
  return work;
}

Cqe VerbsService::ConnectedQp::completion(const fabric::WorkCompletion& wc) const {
  Cqe c;
  c.flags = Cqe::kConnected;
  c.qp_handle = req_.user_handle;
  c.qp_num = qpn_;
  c.status = wc.status;
  c.opcode = wc.opcode;
  c.byte_len = wc.byte_len;
  c.vendor_err = static_cast<uint16_t>(wc.vendor_err);
  return c;
}

void VerbsService::ConnectedQp::on_send_completion(const fabric::WorkCompletion& wc) {
  Cqe c = completion(wc);
  const auto index = static_cast<uint32_t>(wc.wr_id);
  c.wr_id = wr_ids_[index & (req_.sq_depth - 1)];
  c.wqe_index = index + 1;
  scq_->push(c, false);
  if (wc.status != IBV_WC_SUCCESS) sync_state();
}

void VerbsService::ConnectedQp::on_recv_completion(const fabric::WorkCompletion& wc) {
  if (!rcq_) return;  // an XRC target's go to its SRQs' CQs
  Cqe c = receive_cqe(wc);
  c.qp_handle = req_.user_handle;
  c.qp_num = qpn_;
  rcq_->push(c, wc.solicited);
  if (wc.status != IBV_WC_SUCCESS) sync_state();
}

void VerbsService::ConnectedQp::on_qp_event(uint8_t event) {
  sync_state();
  ctx_.object_event(static_cast<ibv_event_type>(event), req_.user_handle);
}

}  // namespace ibfab::api
