// The requester half of a connected QP: see connected_qp.h.
#include <algorithm>
#include <cstring>

#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/model/rc/connected_qp.h"
#include "fabric/model/rc/psn.h"
#include "fabric/wire/packet_codec.h"

namespace ibfab::fabric::rc {

namespace op = wire::opcode;

namespace {

bool reads_back(uint8_t wr_op) {
  return wr_op == wr_opcode::kRdmaRead || wr_op == wr_opcode::kAtomicCmpAndSwp ||
         wr_op == wr_opcode::kAtomicFetchAndAdd;
}

bool local_only(uint8_t wr_op) { return wr_op == wr_opcode::kLocalInv || wr_op == wr_opcode::kBindMw; }

uint8_t wc_opcode_of(uint8_t wr_op) {
  switch (wr_op) {
    case wr_opcode::kLocalInv: return wc_opcode::kLocalInv;
    case wr_opcode::kBindMw: return wc_opcode::kBindMw;
    case wr_opcode::kRdmaWrite:
    case wr_opcode::kRdmaWriteWithImm: return wc_opcode::kRdmaWrite;
    case wr_opcode::kRdmaRead: return wc_opcode::kRdmaRead;
    case wr_opcode::kAtomicCmpAndSwp: return wc_opcode::kCompSwap;
    case wr_opcode::kAtomicFetchAndAdd: return wc_opcode::kFetchAdd;
    default: return wc_opcode::kSend;
  }
}

// The opcode of packet `i` of `n` of a SEND or RDMA WRITE.
uint8_t segment_opcode(uint8_t wr_op, uint32_t i, uint32_t n) {
  const bool first = i == 0, last = i + 1 == n;
  switch (wr_op) {
    case wr_opcode::kRdmaWrite:
    case wr_opcode::kRdmaWriteWithImm: {
      const bool imm = wr_op == wr_opcode::kRdmaWriteWithImm;
      if (first && last) return imm ? op::kRdmaWriteOnlyWithImmediate : op::kRdmaWriteOnly;
      if (first) return op::kRdmaWriteFirst;
      if (last) return imm ? op::kRdmaWriteLastWithImmediate : op::kRdmaWriteLast;
      return op::kRdmaWriteMiddle;
    }
    default: {
      const bool imm = wr_op == wr_opcode::kSendWithImm, inv = wr_op == wr_opcode::kSendWithInv;
      if (first && last)
        return imm ? op::kSendOnlyWithImmediate : inv ? op::kSendOnlyWithInvalidate : op::kSendOnly;
      if (first) return op::kSendFirst;
      if (last) return imm ? op::kSendLastWithImmediate : inv ? op::kSendLastWithInvalidate : op::kSendLast;
      return op::kSendMiddle;
    }
  }
}

uint8_t nak_status(uint8_t code) {
  switch (static_cast<wire::NakCode>(code)) {
    case wire::NakCode::kRemoteAccessError: return wc_status::kRemAccessErr;
    case wire::NakCode::kRemoteOperationalError: return wc_status::kRemOpErr;
    default: return wc_status::kRemInvReqErr;
  }
}

}  // namespace

WorkCompletion ConnectedQp::send_completion(uint32_t seq, uint8_t status) {
  const SendWqe& w = sq_.at(seq);
  WorkCompletion wc;
  wc.wr_id = w.wr_id;
  wc.status = status;
  wc.opcode = wc_opcode_of(w.opcode);
  wc.byte_len = w.length;
  wc.qp_num = qpn_;
  return wc;
}

// --- sending ---

bool ConnectedQp::may_send() {
  if (state_ != QpState::kRts && state_ != QpState::kSqd) return false;
  if (rnr_wait_ || send_seq_ == sq_.tail()) return false;
  if (is_rc() && psn_diff(cur_psn_, una_) >= static_cast<int32_t>(kWindow)) return false;
  if (send_seq_ != assigned_) return true;  // a WQE already under way (or being resent)
  // A new WQE.
  const SendWqe& w = sq_.at(send_seq_);
  if (draining_) return false;
  if ((w.flags & send_flag::kFence) && rd_outstanding_ > 0) return false;
  if (reads_back(w.opcode) && rd_outstanding_ >= std::max<uint32_t>(attr_.max_rd_atomic, 1)) return false;
  return true;
}

void ConnectedQp::pump_send() {
  sim::Simulator& s = hca_.fabric().sim();
  if (s.pending(send_event_)) return;  // the port still carries our last packet: its event pumps
  if (s.now() < send_free_at_) {       // it does, and nothing waited for it
    send_event_ = s.schedule_at(send_free_at_, [this]() { pump_send(); });
    return;
  }
  complete_in_order();  // UC: messages whose last packet has left
  if (!may_send()) return;
  send_free_at_ = std::max(send_packet(), s.now());
  if (state_ == QpState::kError) return;
  // The next packet goes when this one has left. UC completes a message
  // then too, so it always looks again.
  if (!is_rc() || may_send()) send_event_ = s.schedule_at(send_free_at_, [this]() { pump_send(); });
}

sim::Time ConnectedQp::send_packet() {
  const uint32_t seq = send_seq_;
  SendWqe& w = sq_.at(seq);
  if (local_only(w.opcode)) {
    if (seq == assigned_) {
      execute_local(seq);
    } else {  // gone back past it: done once, not again
      ++send_seq_;
      send_pkt_ = 0;
    }
    return hca_.fabric().sim().now();
  }
  if (seq == assigned_) {
    w.first_psn = next_psn_;
    w.packets = reads_back(w.opcode) && w.opcode != wr_opcode::kRdmaRead ? 1 : packets_for(w.length);
    w.read_psn = w.first_psn;
    next_psn_ = psn_add(next_psn_, w.packets);
    ++assigned_;
    send_pkt_ = 0;
    cur_psn_ = w.first_psn;
  }
  const uint32_t psn = cur_psn_;
  const uint32_t last_psn = psn_add(w.first_psn, w.packets);
  sim::Time left;
  if (w.opcode == wr_opcode::kRdmaRead) {
    // One request for what is still to come: a READ resumed after lost
    // responses asks only for the rest.
    const uint32_t offset = std::min(send_pkt_ * mtu(), w.length);
    wire::PacketSpec spec = request(op::kRdmaReadRequest, psn, false, w);
    spec.reth = wire::Reth{w.remote_addr + offset, w.rkey, w.length - offset};
    left = transmit(spec);
    ++rd_outstanding_;
    ++send_seq_;
    send_pkt_ = 0;
    cur_psn_ = last_psn;
  } else if (reads_back(w.opcode)) {
    const bool cas = w.opcode == wr_opcode::kAtomicCmpAndSwp;
    wire::PacketSpec spec = request(cas ? op::kCompareSwap : op::kFetchAdd, psn, false, w);
    spec.atomic_eth = wire::AtomicEth{w.remote_addr, w.rkey, cas ? w.swap : w.compare_add, cas ? w.compare_add : 0};
    left = transmit(spec);
    ++rd_outstanding_;
    ++send_seq_;
    send_pkt_ = 0;
    cur_psn_ = last_psn;
  } else {
    const uint32_t i = send_pkt_;
    const uint32_t offset = i * mtu();
    const uint32_t len = std::min(mtu(), w.length - offset);
    const bool last = i + 1 == w.packets;
    const bool ack_req = is_rc() && (last || i % kAckRequestEvery == kAckRequestEvery - 1);
    wire::PacketSpec spec = request(segment_opcode(w.opcode, i, w.packets), psn, ack_req, w);
    const bool write = w.opcode == wr_opcode::kRdmaWrite || w.opcode == wr_opcode::kRdmaWriteWithImm;
    if (write && i == 0) spec.reth = wire::Reth{w.remote_addr, w.rkey, w.length};
    if (last && (w.opcode == wr_opcode::kSendWithImm || w.opcode == wr_opcode::kRdmaWriteWithImm))
      spec.immediate = w.imm_data;
    if (last && w.opcode == wr_opcode::kSendWithInv) spec.invalidate_rkey = w.invalidate_rkey;
    // A message that completes a receive asks, in its last packet, for a
    // solicited event when the WR did (IBTA 9.2.3).
    spec.bth.solicited_event = last && (w.flags & send_flag::kSolicited) != 0 && w.opcode != wr_opcode::kRdmaWrite;
    // The payload is read now, as the HCA's DMA reads it for each packet.
    std::span<uint8_t> payload;
    PacketRef pkt = build(spec, len, payload);
    if (w.is_inline) {
      if (len) std::memcpy(payload.data(), sq_.inline_bytes(seq).data() + offset, len);
    } else if (gather(seq, offset, payload) != MemoryFault::kNone) {
      fail(seq, wc_status::kLocProtErr);
      return hca_.fabric().sim().now();
    }
    left = send(std::move(pkt));
    cur_psn_ = psn_add(psn, 1);
    if (last) {
      ++send_seq_;
      send_pkt_ = 0;
      if (!is_rc()) w.done = true;  // UC: complete once the last packet has left
    } else {
      ++send_pkt_;
    }
  }
  if (psn_diff(cur_psn_, sent_psn_) > 0) sent_psn_ = cur_psn_;
  if (!is_rc()) una_ = sent_psn_;
  else if (ack_deadline_ == sim::Time::max()) arm_ack_timer();
  return left;
}

MemoryFault ConnectedQp::gather(uint32_t seq, uint32_t offset, std::span<uint8_t> out) {
  const std::span<const Sge> sges = sq_.sges(seq);
  const MemoryTable& table = hca_.memory();
  SendWqe& w = sq_.at(seq);
  if (w.read_chunk == SendWqe::kChunkUnknown) w.read_chunk = table.read_ahead(sges, pd_);  // once per WQE
  if (w.read_chunk == 0) return table.gather(sges, pd_, offset, out);
  const uint32_t chunk = w.read_chunk;
  ReadAhead& reads = hca_.send_reads();
  if (w.read_key == 0) w.read_key = reads.next_key();
  MemoryFault fault = MemoryFault::kNone;
  reads.read(w.read_key, offset, w.length, chunk, out, [&](uint64_t from, std::span<uint8_t> to) {
    fault = table.gather(sges, pd_, from, to);
    return fault == MemoryFault::kNone;
  });
  return fault;
}

void ConnectedQp::execute_local(uint32_t seq) {
  // A WQE that sends nothing: executed when the cursor reaches it, it takes
  // no PSN and completes in order with the others.
  SendWqe& w = sq_.at(seq);
  w.first_psn = next_psn_;
  w.packets = 0;
  ++assigned_;
  ++send_seq_;
  send_pkt_ = 0;
  MemoryFault f;
  if (w.opcode == wr_opcode::kLocalInv) {
    f = hca_.memory().invalidate(w.invalidate_rkey, pd_);
  } else {
    uint32_t bound = 0;
    f = hca_.memory().bind_window(w.bind.mw_rkey, w.bind.new_tag, w.bind.mr_lkey, pd_, qpn_, w.bind.addr,
                                  w.bind.length, w.bind.access, bound);
  }
  if (f != MemoryFault::kNone) {
    fail(seq, w.opcode == wr_opcode::kBindMw ? wc_status::kMwBindErr : wc_status::kLocProtErr);
    return;
  }
  w.done = true;
  complete_in_order();
}

// --- timers ---

void ConnectedQp::arm_ack_timer() {
  ack_deadline_ = sim::Time::max();
  if (attr_.timeout == 0 || rnr_wait_ || psn_diff(sent_psn_, una_) <= 0) return;
  sim::Simulator& s = hca_.fabric().sim();
  ack_deadline_ = s.now() + sim::Time::ns(4096) * (int64_t{1} << std::min<uint8_t>(attr_.timeout, 31));
  // The event stays when it is due no later than the new deadline: it
  // then moves itself on. Restarting the timer on every ACK would leave a
  // cancelled event per ACK in the simulator's queue until its time.
  if (s.pending(ack_timer_) && ack_timer_at_ <= ack_deadline_) return;
  s.cancel(ack_timer_);
  ack_timer_at_ = ack_deadline_;
  ack_timer_ = s.schedule_at(ack_timer_at_, [this]() { on_ack_timer(); });
}

void ConnectedQp::stop_ack_timer() { ack_deadline_ = sim::Time::max(); }

void ConnectedQp::on_ack_timer() {
  sim::Simulator& s = hca_.fabric().sim();
  if (ack_deadline_ == sim::Time::max()) return;
  if (s.now() < ack_deadline_) {
    ack_timer_at_ = ack_deadline_;
    ack_timer_ = s.schedule_at(ack_timer_at_, [this]() { on_ack_timer(); });
    return;
  }
  ack_deadline_ = sim::Time::max();
  on_ack_timeout();
}

void ConnectedQp::on_ack_timeout() {
  if (state_ != QpState::kRts && state_ != QpState::kSqd) return;
  if (psn_diff(sent_psn_, una_) <= 0) return;
  if (retry_left_ == 0) {
    fail(wqe_holding(una_), wc_status::kRetryExcErr);
    return;
  }
  --retry_left_;
  go_back(una_);
  pump_send();
}

// --- what comes back ---

void ConnectedQp::on_response(const wire::ParsedPacket& p) {
  if (state_ != QpState::kRts && state_ != QpState::kSqd) return;
  const uint8_t o = p.bth.opcode & 0x1f;
  if (o == op::kAcknowledge) on_ack(p);
  else if (o == op::kAtomicAcknowledge) on_atomic_ack(p);
  else on_read_response(p);
  if (state_ == QpState::kError) return;
  complete_in_order();
  pump_send();
}

void ConnectedQp::on_ack(const wire::ParsedPacket& p) {
  if (!p.aeth) return;
  const uint32_t psn = p.bth.psn;
  switch (p.aeth->kind()) {
    case wire::AckKind::kAck:
      acknowledge_through(psn);
      return;
    case wire::AckKind::kRnrNak: {
      if (psn_diff(psn, una_) < 0 || psn_diff(psn, sent_psn_) >= 0) return;
      acknowledge_through(psn_add(psn, -1));
      if (attr_.rnr_retry != 7) {
        if (rnr_left_ == 0) {
          fail(wqe_holding(psn), wc_status::kRnrRetryExcErr);
          return;
        }
        --rnr_left_;
      }
      go_back(psn);
      rnr_wait_ = true;
      sim::Simulator& s = hca_.fabric().sim();
      stop_ack_timer();
      s.cancel(rnr_timer_);
      const auto wait = static_cast<int64_t>(wire::rnr_timer_ns(p.aeth->value()));
      rnr_timer_ = s.schedule(sim::Time::ns(wait), [this]() {
        rnr_wait_ = false;
        pump_send();
      });
      return;
    }
    case wire::AckKind::kNak: {
      if (psn_diff(psn, una_) < 0 || psn_diff(psn, sent_psn_) >= 0) return;
      acknowledge_through(psn_add(psn, -1));
      if (p.aeth->value() == static_cast<uint8_t>(wire::NakCode::kPsnSequenceError)) {
        if (!rnr_wait_) go_back(psn);
        return;
      }
      fail(wqe_holding(psn), nak_status(p.aeth->value()));
      return;
    }
  }
}

void ConnectedQp::on_read_response(const wire::ParsedPacket& p) {
  const uint32_t psn = p.bth.psn;
  if (psn_diff(psn, una_) < 0 || psn_diff(psn, sent_psn_) >= 0) return;  // stale, or never asked for
  // A response acknowledges every request before it.
  if (psn != una_ && !acknowledge_through(psn_add(psn, -1))) return;
  if (psn != una_) return;  // an earlier READ's responses are missing: it is being resent
  const uint32_t seq = wqe_holding(psn);
  if (seq == assigned_) return;
  SendWqe& w = sq_.at(seq);
  if (w.opcode != wr_opcode::kRdmaRead || w.done || w.read_psn != psn) return;
  const uint32_t offset = psn_diff(psn, w.first_psn) * mtu();
  const uint32_t expected = std::min(mtu(), w.length - std::min(offset, w.length));
  if (p.payload.size() != expected) return;
  if (!p.payload.empty() &&
      hca_.memory().scatter_posted(sq_.sges(seq), pd_, offset, p.payload, read_posted_) != MemoryFault::kNone) {
    settle(read_posted_);
    fail(seq, wc_status::kLocProtErr);
    return;
  }
  w.read_psn = psn_add(psn, 1);
  if (w.read_psn == psn_add(w.first_psn, w.packets)) {
    if (!settle(read_posted_)) {
      fail(seq, wc_status::kLocProtErr);
      return;
    }
    w.done = true;
    if (seq - sq_.head() < send_seq_ - sq_.head()) --rd_outstanding_;
  }
  advance_una(w.read_psn);
}

void ConnectedQp::on_atomic_ack(const wire::ParsedPacket& p) {
  if (!p.atomic_ack_eth) return;
  const uint32_t psn = p.bth.psn;
  if (psn_diff(psn, una_) < 0 || psn_diff(psn, sent_psn_) >= 0) return;
  if (psn != una_ && !acknowledge_through(psn_add(psn, -1))) return;
  if (psn != una_) return;
  const uint32_t seq = wqe_holding(psn);
  if (seq == assigned_) return;
  SendWqe& w = sq_.at(seq);
  if (!reads_back(w.opcode) || w.opcode == wr_opcode::kRdmaRead || w.done) return;
  uint8_t original[8];
  std::memcpy(original, &p.atomic_ack_eth->original, 8);  // host order, as the HCA writes it
  if (hca_.memory().scatter(sq_.sges(seq), pd_, 0, original) != MemoryFault::kNone) {
    fail(seq, wc_status::kLocProtErr);
    return;
  }
  w.done = true;
  w.read_psn = psn_add(psn, 1);
  if (seq - sq_.head() < send_seq_ - sq_.head()) --rd_outstanding_;
  advance_una(w.read_psn);
}

bool ConnectedQp::acknowledge_through(uint32_t n) {
  if (psn_diff(n, psn_add(una_, -1)) < 0 || psn_diff(n, sent_psn_) >= 0) return false;
  uint32_t una = psn_add(n, 1);
  bool lost = false;
  for (uint32_t seq = sq_.head(); seq != assigned_; ++seq) {
    SendWqe& w = sq_.at(seq);
    const bool whole = psn_diff(psn_add(w.first_psn, w.packets - 1), n) <= 0;
    if (w.done && whole) continue;
    if (reads_back(w.opcode) && !w.done && psn_diff(n, w.read_psn) >= 0) {
      // Acknowledged at or past a response of a READ or atomic that never
      // came: it was lost; ask again from the first one missing.
      una = w.read_psn;
      lost = true;
      break;
    }
    if (!whole) break;
    w.done = true;
  }
  advance_una(una);
  if (lost) recover(una_);
  return true;
}

void ConnectedQp::recover(uint32_t psn) {
  if (recovering_ && recover_psn_ == psn) return;  // already resent from there
  recovering_ = true;
  recover_psn_ = psn;
  go_back(psn);
}

void ConnectedQp::advance_una(uint32_t una) {
  if (psn_diff(una, una_) <= 0) return;
  una_ = una;
  recovering_ = false;
  retry_left_ = attr_.retry_cnt;
  rnr_left_ = attr_.rnr_retry;
  arm_ack_timer();
}

uint32_t ConnectedQp::wqe_holding(uint32_t psn) {
  for (uint32_t seq = sq_.head(); seq != assigned_; ++seq) {
    const SendWqe& w = sq_.at(seq);
    if (psn_diff(psn, w.first_psn) >= 0 && psn_diff(psn, w.first_psn) < static_cast<int32_t>(w.packets))
      return seq;
  }
  return assigned_;
}

void ConnectedQp::go_back(uint32_t psn) {
  const uint32_t seq = wqe_holding(psn);
  send_seq_ = seq;
  cur_psn_ = psn;
  send_pkt_ = seq == assigned_ ? 0 : static_cast<uint32_t>(psn_diff(psn, sq_.at(seq).first_psn));
  if (seq == assigned_) cur_psn_ = next_psn_;
  rd_outstanding_ = 0;
  for (uint32_t s = sq_.head(); s != seq; ++s)
    if (reads_back(sq_.at(s).opcode) && !sq_.at(s).done) ++rd_outstanding_;
  stop_ack_timer();  // armed again by the first packet resent
}

void ConnectedQp::complete_in_order() {
  while (sq_.head() != assigned_) {
    const uint32_t seq = sq_.head();
    if (!sq_.at(seq).done) break;
    const bool report = signalled(seq);
    const WorkCompletion wc = send_completion(seq, wc_status::kSuccess);
    sq_.pop();
    if (report && ep_) ep_->on_send_completion(wc);
    if (state_ == QpState::kError) return;
  }
  check_drained();
}

void ConnectedQp::check_drained() {
  if (!draining_ || drained_reported_ || state_ != QpState::kSqd) return;
  if (sq_.head() != assigned_ || send_seq_ != assigned_) return;
  drained_reported_ = true;
  if (ep_) ep_->on_qp_event(qp_event::kSqDrained);
}

void ConnectedQp::fail(uint32_t seq, uint8_t status) {
  has_error_ = true;
  err_seq_ = seq;
  err_status_ = status;
  enter_error(0);
}

}  // namespace ibfab::fabric::rc
