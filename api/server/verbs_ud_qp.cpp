#include "api/server/verbs_ud_qp.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "api/server/verbs_context.h"
#include "fabric/model/port.h"

namespace ibfab::api {

using rings::Cqe;
using rings::SendWqe;

namespace {

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int VerbsService::Qp::attach(fabric::Hca& hca, const std::array<uint8_t, 16>& mgid, uint16_t mlid) {
  const std::pair<std::array<uint8_t, 16>, uint16_t> key{mgid, mlid};
  if (std::find(mcast_.begin(), mcast_.end(), key) != mcast_.end()) return 0;
  if (const int e = hca.attach_mcast(qpn_, mgid, mlid)) return e;
  mcast_.push_back(key);
  return 0;
}

int VerbsService::Qp::detach(fabric::Hca& hca, const std::array<uint8_t, 16>& mgid, uint16_t mlid) {
  const auto it = std::find(mcast_.begin(), mcast_.end(), std::pair{mgid, mlid});
  if (it == mcast_.end()) return EINVAL;
  mcast_.erase(it);  // as uverbs: off the list first, then the HCA's answer
  return hca.detach_mcast(qpn_, mgid, mlid);
}

void VerbsService::Qp::set_state(uint8_t s) {
  state_ = s;
  if (s == IBV_QPS_RESET) {  // the send queue's completions not yet written go with it
    completing_.clear();
    sim_.cancel(completing_timer_);
    sq_tail_ = rq_taken_ = 0;
    rings_->sq_tail.value.store(0, std::memory_order_release);
    rings_->rq_taken.value.store(0, std::memory_order_release);
  }
  rings_->state.value.store(s, std::memory_order_release);
}

bool VerbsService::Qp::run(uint64_t limit) {
  const bool held = place_held();
  if (state_ == IBV_QPS_ERR) {
    flush();
    return false;
  }
  if (state_ != IBV_QPS_RTS) return held;
  const uint32_t head = rings_->sq_head.value.load(std::memory_order_acquire);
  if (head == sq_tail_) return held;
  if (head - sq_tail_ > req_.sq_depth) {  // not what a well-behaved client writes
    set_state(IBV_QPS_ERR);
    ctx_.object_event(IBV_EVENT_QP_FATAL, req_.user_handle);
    return true;
  }
  const fabric::Port& port = ctx_.hca().port(ctx_.hca().qp_port(qpn_));
  const uint32_t mtu = fabric::mtu_bytes(port.neighbor_mtu);
  const sim::Time now = sim_.now();
  while (sq_tail_ != head) {
    const uint8_t* slot = rings_->send_slot(sq_tail_, req_.sq_depth, req_.sq_slot);
    SendWqe w;
    std::memcpy(&w, slot, sizeof w);
    if (w.stamp >= limit) break;  // posted after what the engine acts on next
    uint8_t status = w.status;
    if (status == IBV_WC_SUCCESS && (w.length > req_.sq_slot - sizeof w || w.length > mtu)) status = IBV_WC_LOC_LEN_ERR;
    std::optional<sim::Time> left;
    if (status == IBV_WC_SUCCESS) {
      fabric::UdSend s;
      s.dlid = w.dlid;
      s.dest_qp = w.remote_qpn & 0xFFFFFF;
      s.qkey = w.remote_qkey;
      s.sl = w.sl;
      s.src_path_bits = w.src_path_bits;
      s.global = (w.flags & SendWqe::kGlobal) != 0;
      std::memcpy(s.dgid.data(), w.dgid, 16);
      s.sgid_index = w.sgid_index;
      s.hop_limit = w.hop_limit;
      s.traffic_class = w.traffic_class;
      s.flow_label = w.flow_label;
      if (w.flags & SendWqe::kImmediate) s.immediate = be32toh(w.imm_data);
      s.solicited = (w.flags & SendWqe::kSolicited) != 0;
      s.payload = std::span<const uint8_t>(slot + sizeof w, w.length);
      left = ctx_.hca().send_ud(qpn_, s);  // a port that is not Active drops it, as a wire would
    }
    // The slot is free before its completion shows: a client that saw the
    // CQE may post again at once.
    rings_->sq_tail.value.store(++sq_tail_, std::memory_order_release);
    if (status != IBV_WC_SUCCESS || (w.flags & SendWqe::kSignaled) || req_.sq_sig_all) {
      Cqe c = completion();
      c.wr_id = w.wr_id;
      c.status = status;
      c.byte_len = w.length;
      complete_send(c, left.value_or(now));
    }
    if (status != IBV_WC_SUCCESS) {
      set_state(IBV_QPS_ERR);
      break;
    }
  }
  return true;
}

void VerbsService::Qp::flush() {
  const uint32_t head = rings_->sq_head.value.load(std::memory_order_acquire);
  if (head - sq_tail_ <= req_.sq_depth) {
    while (sq_tail_ != head) {
      SendWqe w;
      std::memcpy(&w, rings_->send_slot(sq_tail_, req_.sq_depth, req_.sq_slot), sizeof w);
      rings_->sq_tail.value.store(++sq_tail_, std::memory_order_release);
      Cqe c = completion();
      c.wr_id = w.wr_id;
      c.status = IBV_WC_WR_FLUSH_ERR;
      complete_send(c, sim_.now());
    }
  }
  const uint32_t posted = rings_->rq_posted.value.load(std::memory_order_acquire);
  if (posted - rq_taken_ <= req_.rq_depth) {
    for (; rq_taken_ != posted; ++rq_taken_) {
      Cqe c = completion();
      c.flags = Cqe::kReceive;
      c.status = IBV_WC_WR_FLUSH_ERR;
      rcq_->push(c, false);
    }
    rings_->rq_taken.value.store(rq_taken_, std::memory_order_release);
  }
}

void VerbsService::Qp::complete_send(const Cqe& c, sim::Time at) {
  if (completing_.empty()) {
    if (at <= sim_.now()) {
      scq_->push(c, false);
      return;
    }
    completing_timer_ = sim_.schedule_at(at, [this] { complete_due(); });
  } else {
    at = std::max(at, completing_.back().at);  // behind the earlier ones, whose timer is pending
  }
  completing_.push_back({at, c});
}

void VerbsService::Qp::complete_due() {
  const sim::Time now = sim_.now();
  while (!completing_.empty() && completing_.front().at <= now) {
    scq_->push(completing_.front().cqe, false);
    completing_.pop_front();
  }
  // The rest at once when the last has left: a burst costs two events, and
  // no completion is written before its message has left.
  if (!completing_.empty())
    completing_timer_ = sim_.schedule_at(completing_.back().at, [this] { complete_due(); });
}

bool VerbsService::Qp::on_receive(const fabric::UdMessage& m) {
  if (state_ < IBV_QPS_RTR || state_ == IBV_QPS_ERR) return false;
  const std::size_t bytes = rings::kGrhBytes + m.payload.size();
  if (bytes > req_.rq_slot) return false;
  Cqe c = completion();
  c.flags = Cqe::kReceive;
  if (m.grh) c.flags |= Cqe::kGrh;
  c.byte_len = static_cast<uint32_t>(bytes);
  c.src_qp = m.src_qp;
  c.slid = m.slid;
  c.sl = m.sl;
  c.dlid_path_bits = m.dlid_path_bits;
  c.pkey_index = m.pkey_index;
  if (m.immediate) {
    c.flags |= Cqe::kImmediate;
    c.imm_data = htobe32(*m.immediate);
  }
  if (held_.empty() && receive_posted()) return place(c, m.grh ? m.grh->data() : nullptr, m.payload, m.solicited);
  // No receive posted (or older messages wait): held for the grace, if any
  // and if the QP's receive queue could take it, else dropped and counted.
  const int64_t grace = ctx_.service().rx_grace_ns();
  if (grace <= 0 || held_.size() >= kHeldPerReceive * req_.rq_depth) return false;
  Held h;
  h.cqe = c;
  h.solicited = m.solicited;
  h.bytes.resize(bytes);
  if (m.grh) std::memcpy(h.bytes.data(), m.grh->data(), rings::kGrhBytes);
  std::memcpy(h.bytes.data() + rings::kGrhBytes, m.payload.data(), m.payload.size());
  h.until_ns = wall_ns() + grace;
  held_.push_back(std::move(h));
  return true;
}

bool VerbsService::Qp::place(const Cqe& c, const uint8_t* grh, std::span<const uint8_t> payload, bool solicited) {
  uint8_t* slot = rings_->recv_slot(rq_taken_, req_.sq_depth, req_.sq_slot, req_.rq_depth, req_.rq_slot);
  if (grh) std::memcpy(slot, grh, rings::kGrhBytes);
  std::memcpy(slot + rings::kGrhBytes, payload.data(), payload.size());
  // The CQE goes after the slot's bytes; the slot is the client's once it
  // sees the CQE.
  if (!rcq_->push(c, solicited)) return false;
  rings_->rq_taken.value.store(++rq_taken_, std::memory_order_release);
  return true;
}

bool VerbsService::Qp::place_held() {
  if (held_.empty()) return false;
  if (state_ < IBV_QPS_RTR || state_ == IBV_QPS_ERR) {
    ctx_.service().count_late_drops(ctx_.hca(), held_.size());
    held_.clear();
    return true;
  }
  const int64_t now = wall_ns();
  while (!held_.empty()) {
    Held& h = held_.front();
    if (receive_posted()) {
      const bool grh = (h.cqe.flags & Cqe::kGrh) != 0;
      if (!place(h.cqe, grh ? h.bytes.data() : nullptr,
                 std::span<const uint8_t>(h.bytes).subspan(rings::kGrhBytes), h.solicited))
        ctx_.service().count_late_drops(ctx_.hca(), 1);
    } else if (now >= h.until_ns) {
      ctx_.service().count_late_drops(ctx_.hca(), 1);
    } else {
      break;
    }
    held_.pop_front();
  }
  return true;
}

}  // namespace ibfab::api
