// The responder half of a connected QP: see connected_qp.h.
#include <algorithm>
#include <cstring>
#include <utility>

#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/model/rc/connected_qp.h"
#include "fabric/model/rc/psn.h"
#include "fabric/wire/packet_codec.h"

namespace ibfab::fabric::rc {

namespace op = wire::opcode;

namespace {

bool is_send(uint8_t o) {
  return o <= op::kSendOnlyWithImmediate || o == op::kSendLastWithInvalidate || o == op::kSendOnlyWithInvalidate;
}
bool is_write(uint8_t o) { return o >= op::kRdmaWriteFirst && o <= op::kRdmaWriteOnlyWithImmediate; }
bool starts_message(uint8_t o) {
  return o == op::kSendFirst || o == op::kSendOnly || o == op::kSendOnlyWithImmediate ||
         o == op::kSendOnlyWithInvalidate || o == op::kRdmaWriteFirst || o == op::kRdmaWriteOnly ||
         o == op::kRdmaWriteOnlyWithImmediate;
}
bool ends_message(uint8_t o) {
  return o != op::kSendFirst && o != op::kSendMiddle && o != op::kRdmaWriteFirst && o != op::kRdmaWriteMiddle;
}

uint8_t syndrome(wire::Aeth a) { return a.syndrome; }

}  // namespace

void ConnectedQp::on_request(const wire::ParsedPacket& p) {
  if (state_ != QpState::kRtr && state_ != QpState::kRts && state_ != QpState::kSqd && state_ != QpState::kSqe)
    return;
  if (state_ == QpState::kRtr && !comm_est_) {
    comm_est_ = true;
    if (ep_) ep_->on_qp_event(qp_event::kCommEst);
  }
  const uint8_t o = p.bth.opcode & 0x1f;
  const int32_t distance = psn_diff(p.bth.psn, epsn_);
  if (transport_ == Transport::kXrcRecv && !bind_xrc_srq(p)) {
    // No such XRC SRQ in this target's domain: the expected request is
    // refused (NAK invalid request), anything else ignored.
    if (distance == 0) {
      responder_error(Verdict::kInvalid);
    }
    return;
  }
  if (!is_rc()) {
    on_uc_request(p, o, distance);
    return;
  }
  if (distance < 0) {
    on_duplicate(p, o);
    return;
  }
  if (distance > 0) {
    // Packets were lost: one NAK, until the expected PSN comes.
    if (!nak_sent_) {
      nak_sent_ = true;
      push_nak(epsn_, syndrome(wire::Aeth::nak(0, wire::NakCode::kPsnSequenceError)));
    }
    return;
  }
  nak_sent_ = false;
  const Verdict v = execute(p, o);
  if (v == Verdict::kAccepted) {
    if (p.bth.ack_req && o != op::kRdmaReadRequest && o != op::kCompareSwap && o != op::kFetchAdd) push_ack();
  } else if (v == Verdict::kRnr) {
    nak_sent_ = true;
    push_nak(epsn_, syndrome(wire::Aeth::rnr_nak(0, attr_.min_rnr_timer)));
  } else if (v != Verdict::kDrop) {
    responder_error(v);
  }
  pump_respond();
}

void ConnectedQp::on_uc_request(const wire::ParsedPacket& p, uint8_t o, int32_t distance) {
  if (distance != 0) {
    // Packets were lost: so is the message they belonged to. A receive
    // WQE it had taken stays for the next message.
    end_message();
    epsn_ = p.bth.psn;
  }
  if (in_msg_ == InMessage::kNone && !starts_message(o)) {
    epsn_ = psn_add(p.bth.psn, 1);  // the rest of a lost message
    return;
  }
  if (o == op::kRdmaReadRequest || o == op::kCompareSwap || o == op::kFetchAdd) return;  // not UC
  const Verdict v = execute(p, o);
  if (v == Verdict::kLengthError || v == Verdict::kOperational) {
    responder_error(v);
    return;
  }
  if (v != Verdict::kAccepted) {
    end_message();  // dropped silently: UC has no NAK
    epsn_ = psn_add(p.bth.psn, 1);
  }
}

ConnectedQp::Verdict ConnectedQp::execute(const wire::ParsedPacket& p, uint8_t o) {
  if (is_send(o)) return on_send(p, o);
  if (is_write(o)) return on_write(p, o);
  if (in_msg_ != InMessage::kNone) return Verdict::kInvalid;  // a message left unfinished
  if (o == op::kRdmaReadRequest) return on_read_request(p);
  if (o == op::kCompareSwap || o == op::kFetchAdd) return on_atomic(p, o);
  return Verdict::kInvalid;
}

bool ConnectedQp::bind_xrc_srq(const wire::ParsedPacket& p) {
  Hca::Srq* srq = p.xrc_srqn ? hca_.xrc_srq(*p.xrc_srqn, xrcd_) : nullptr;
  if (!srq) return false;
  xrc_srqn_ = *p.xrc_srqn;
  rq_ = &srq->rq;
  rq_pd_ = rdma_pd_ = srq->pd;
  srq_ep_ = srq->ep;
  return true;
}

QpEndpoint* ConnectedQp::recv_endpoint() {
  if (transport_ != Transport::kXrcRecv) return ep_;
  Hca::Srq* srq = hca_.xrc_srq(xrc_srqn_, xrcd_);  // null once the SRQ is gone
  return srq ? srq->cq : nullptr;
}

bool ConnectedQp::settle(HostMemory*& m) {
  HostMemory* held = std::exchange(m, nullptr);
  return held == nullptr || held->flush();
}

void ConnectedQp::end_message() {
  settle(posted_);
  in_msg_ = InMessage::kNone;
}

bool ConnectedQp::take_receive() {
  if (have_wqe_) return true;
  if (!rq_) return false;
  if (rq_->empty()) {
    if (QpEndpoint* feeder = srq_ep_ ? srq_ep_ : ep_) feeder->on_receive_wanted();
    if (rq_->empty()) return false;
  }
  const ReceiveQueue::Wqe w = rq_->front();
  if (recv_sge_.size() < w.sge.size()) recv_sge_.resize(w.sge.size());  // an XRC target's SRQs differ
  recv_wr_id_ = w.wr_id;
  recv_num_sge_ = static_cast<uint32_t>(w.sge.size());
  recv_capacity_ = 0;
  for (uint32_t i = 0; i < recv_num_sge_; ++i) {
    recv_sge_[i] = w.sge[i];
    recv_capacity_ += w.sge[i].length;
  }
  have_wqe_ = true;
  if (rq_->pop() && srq_ep_) srq_ep_->on_qp_event(qp_event::kSrqLimitReached);
  return true;
}

void ConnectedQp::complete_receive(const wire::ParsedPacket& p, uint8_t status, uint8_t opcode, uint8_t flags,
                                   uint32_t imm) {
  have_wqe_ = false;
  WorkCompletion wc;
  wc.wr_id = recv_wr_id_;
  wc.status = status;
  wc.opcode = opcode;
  wc.wc_flags = static_cast<uint8_t>(flags | (p.grh ? wc_flag::kGrh : 0));
  wc.byte_len = msg_bytes_;
  wc.imm_data = imm;
  wc.qp_num = qpn_;
  wc.src_qp = attr_.dest_qp_num;
  wc.slid = p.lrh.slid;
  wc.sl = p.lrh.sl;
  wc.pkey_index = attr_.pkey_index;
  wc.dlid_path_bits = static_cast<uint8_t>(p.lrh.dlid & ((1u << hca_.port(attr_.port).lmc) - 1));
  wc.solicited = p.bth.solicited_event;
  if (QpEndpoint* r = recv_endpoint()) r->on_recv_completion(wc);
}

ConnectedQp::Verdict ConnectedQp::on_send(const wire::ParsedPacket& p, uint8_t o) {
  const bool first = o == op::kSendFirst || o == op::kSendOnly || o == op::kSendOnlyWithImmediate ||
                     o == op::kSendOnlyWithInvalidate;
  if (first) {
    if (in_msg_ != InMessage::kNone) return Verdict::kInvalid;
    if (!take_receive()) return Verdict::kRnr;
    in_msg_ = InMessage::kSend;
    msg_bytes_ = 0;
  } else if (in_msg_ != InMessage::kSend) {
    return Verdict::kInvalid;
  }
  if (msg_bytes_ + p.payload.size() > recv_capacity_) {
    msg_bytes_ += static_cast<uint32_t>(p.payload.size());
    complete_receive(p, wc_status::kLocLenErr, wc_opcode::kRecv, 0, 0);
    return Verdict::kLengthError;
  }
  if (!p.payload.empty() &&
      hca_.memory().scatter_posted(std::span<const Sge>(recv_sge_.data(), recv_num_sge_), rq_pd_, msg_bytes_,
                                   p.payload, posted_) != MemoryFault::kNone) {
    end_message();
    complete_receive(p, wc_status::kLocProtErr, wc_opcode::kRecv, 0, 0);
    return Verdict::kOperational;
  }
  msg_bytes_ += static_cast<uint32_t>(p.payload.size());
  epsn_ = psn_add(epsn_, 1);
  if (!ends_message(o)) return Verdict::kAccepted;
  if (!settle(posted_)) {
    end_message();
    complete_receive(p, wc_status::kLocProtErr, wc_opcode::kRecv, 0, 0);
    return Verdict::kOperational;
  }
  uint8_t flags = 0;
  uint32_t imm = 0;
  if (p.immediate) {
    flags = wc_flag::kWithImm;
    imm = *p.immediate;
  } else if (p.invalidate_rkey) {
    flags = wc_flag::kWithInv;
    imm = *p.invalidate_rkey;
    hca_.memory().invalidate(imm, rdma_pd_);
  }
  in_msg_ = InMessage::kNone;
  msn_ = psn_add(msn_, 1);
  complete_receive(p, wc_status::kSuccess, wc_opcode::kRecv, flags, imm);
  return Verdict::kAccepted;
}

ConnectedQp::Verdict ConnectedQp::on_write(const wire::ParsedPacket& p, uint8_t o) {
  const bool first = starts_message(o);
  const bool with_imm = o == op::kRdmaWriteLastWithImmediate || o == op::kRdmaWriteOnlyWithImmediate;
  // The immediate needs a receive WQE: without one, nothing of this packet
  // is taken (RNR), so that its retry finds everything as it was.
  if (with_imm && !take_receive()) return Verdict::kRnr;
  if (first) {
    if (in_msg_ != InMessage::kNone || !p.reth) return Verdict::kInvalid;
    write_length_ = p.reth->dma_length;
    write_mem_ = nullptr;
    write_addr_ = 0;
    if (write_length_ > 0) {
      DmaTarget t;
      if (!(attr_.access & access::kRemoteWrite) ||
          hca_.memory().remote(p.reth->rkey, rdma_pd_, qpn_, p.reth->va, write_length_, access::kRemoteWrite, t) !=
              MemoryFault::kNone)
        return Verdict::kAccess;
      write_mem_ = t.memory;
      write_addr_ = t.addr;
    }
    in_msg_ = InMessage::kWrite;
    msg_bytes_ = 0;
  } else if (in_msg_ != InMessage::kWrite) {
    return Verdict::kInvalid;
  }
  if (msg_bytes_ + p.payload.size() > write_length_) return Verdict::kInvalid;
  if (!p.payload.empty()) {
    posted_ = write_mem_;
    if (!write_mem_->write_posted(write_addr_ + msg_bytes_, p.payload)) return Verdict::kAccess;
  }
  msg_bytes_ += static_cast<uint32_t>(p.payload.size());
  if (ends_message(o) && !settle(posted_)) return Verdict::kAccess;
  epsn_ = psn_add(epsn_, 1);
  if (!ends_message(o)) return Verdict::kAccepted;
  in_msg_ = InMessage::kNone;
  msn_ = psn_add(msn_, 1);
  if (with_imm) complete_receive(p, wc_status::kSuccess, wc_opcode::kRecvRdmaWithImm, wc_flag::kWithImm, *p.immediate);
  return Verdict::kAccepted;
}

bool ConnectedQp::read_response(const wire::ParsedPacket& p, Response& r) {
  r.kind = Response::Kind::kRead;
  r.psn = p.bth.psn;
  r.length = p.reth->dma_length;
  if (r.length == 0) return true;  // a zero-length READ checks no R_Key
  DmaTarget t;
  if (!(attr_.access & access::kRemoteRead) ||
      hca_.memory().remote(p.reth->rkey, rdma_pd_, qpn_, p.reth->va, r.length, access::kRemoteRead, t) !=
          MemoryFault::kNone)
    return false;
  r.memory = t.memory;
  r.addr = t.addr;
  return true;
}

ConnectedQp::Verdict ConnectedQp::on_read_request(const wire::ParsedPacket& p) {
  if (!p.reth) return Verdict::kInvalid;
  if (responses_.rd_atomic() >= std::min<uint32_t>(attr_.max_dest_rd_atomic, ResponseQueue::kMaxRdAtomic))
    return Verdict::kInvalid;
  Response r;
  if (!read_response(p, r)) return Verdict::kAccess;
  responses_.push(r);
  epsn_ = psn_add(epsn_, packets_for(r.length));
  msn_ = psn_add(msn_, 1);
  return Verdict::kAccepted;
}

ConnectedQp::Verdict ConnectedQp::on_atomic(const wire::ParsedPacket& p, uint8_t o) {
  if (!p.atomic_eth) return Verdict::kInvalid;
  if (responses_.rd_atomic() >= std::min<uint32_t>(attr_.max_dest_rd_atomic, ResponseQueue::kMaxRdAtomic))
    return Verdict::kInvalid;
  const wire::AtomicEth& a = *p.atomic_eth;
  if (a.va % 8 != 0) return Verdict::kInvalid;
  DmaTarget t;
  if (!(attr_.access & access::kRemoteAtomic) ||
      hca_.memory().remote(a.rkey, rdma_pd_, qpn_, a.va, 8, access::kRemoteAtomic, t) != MemoryFault::kNone)
    return Verdict::kAccess;
  // The engine runs one event at a time: this read-modify-write is atomic
  // against every other QP's, on this HCA and the others.
  uint64_t value = 0;
  if (!t.memory->read(t.addr, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&value), 8))) return Verdict::kAccess;
  const uint64_t original = value;
  if (o == op::kFetchAdd) value += a.swap_add;
  else if (value == a.compare) value = a.swap_add;
  if (value != original &&
      !t.memory->write(t.addr, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&value), 8)))
    return Verdict::kAccess;
  atomics_.put(p.bth.psn, original);
  Response r;
  r.kind = Response::Kind::kAtomic;
  r.psn = p.bth.psn;
  r.original = original;
  responses_.push(r);
  epsn_ = psn_add(epsn_, 1);
  msn_ = psn_add(msn_, 1);
  return Verdict::kAccepted;
}

void ConnectedQp::on_duplicate(const wire::ParsedPacket& p, uint8_t o) {
  if (o == op::kRdmaReadRequest) {
    // Executed again from its PSN: the requester lost (some of) the responses.
    if (!p.reth || responses_.full() || responses_.rd_atomic() >= ResponseQueue::kMaxRdAtomic) return;
    Response r;
    if (!read_response(p, r)) return;
    responses_.push(r);
  } else if (o == op::kCompareSwap || o == op::kFetchAdd) {
    // Answered from the cache, never executed twice.
    Response r;
    r.kind = Response::Kind::kAtomic;
    r.psn = p.bth.psn;
    if (!atomics_.find(p.bth.psn, r.original) || responses_.full()) return;
    responses_.push(r);
  } else if (p.bth.ack_req) {
    push_ack();
  }
  pump_respond();
}

void ConnectedQp::push_ack() {
  const uint8_t ack = syndrome(wire::Aeth::ack(0));
  const uint32_t psn = psn_add(epsn_, -1);
  if (!responses_.empty() && responses_.back().kind == Response::Kind::kAck && responses_.back().syndrome == ack) {
    responses_.back().psn = psn;  // coalesced: the later ACK covers both
    return;
  }
  Response r;
  r.psn = psn;
  r.syndrome = ack;
  responses_.push(r);
}

void ConnectedQp::push_nak(uint32_t psn, uint8_t syn) {
  Response r;
  r.psn = psn;
  r.syndrome = syn;
  responses_.push(r);
}

void ConnectedQp::responder_error(Verdict v) {
  wire::NakCode code = wire::NakCode::kInvalidRequest;
  uint8_t event = qp_event::kQpReqErr;
  if (v == Verdict::kAccess) {
    code = wire::NakCode::kRemoteAccessError;
    event = qp_event::kQpAccessErr;
  } else if (v == Verdict::kOperational) {
    code = wire::NakCode::kRemoteOperationalError;
    event = qp_event::kQpFatal;
  } else if (v == Verdict::kLengthError) {
    event = 0;  // reported in the receive's completion
  }
  const uint32_t psn = epsn_;
  enter_error(event, /*keep_responses=*/true);
  if (is_rc()) {
    push_nak(psn, syndrome(wire::Aeth::nak(0, code)));
    pump_respond();
  }
}

void ConnectedQp::pump_respond() {
  sim::Simulator& s = hca_.fabric().sim();
  if (s.pending(respond_event_) || responses_.empty()) return;
  if (state_ == QpState::kReset) return;
  if (s.now() < respond_free_at_) {  // our last response is still leaving
    respond_event_ = s.schedule_at(respond_free_at_, [this]() { pump_respond(); });
    return;
  }
  Response& r = responses_.front();
  PacketRef pkt;
  if (r.kind == Response::Kind::kAck) {
    wire::PacketSpec spec = header(op::kAcknowledge, r.psn, false);
    spec.aeth = wire::Aeth{r.syndrome, msn_};
    pkt = pack(spec);
    responses_.pop();
  } else if (r.kind == Response::Kind::kAtomic) {
    wire::PacketSpec spec = header(op::kAtomicAcknowledge, r.psn, false);
    spec.aeth = wire::Aeth::ack(msn_);
    spec.atomic_ack_eth = wire::AtomicAckEth{r.original};
    pkt = pack(spec);
    responses_.pop();
  } else {
    // One READ response, read from host memory now.
    const uint32_t len = std::min(mtu(), r.length - r.offset);
    const bool first = r.offset == 0, last = r.offset + len >= r.length;
    const uint8_t o = first && last ? op::kRdmaReadResponseOnly
                      : first       ? op::kRdmaReadResponseFirst
                      : last        ? op::kRdmaReadResponseLast
                                    : op::kRdmaReadResponseMiddle;
    wire::PacketSpec spec = header(o, r.psn, false);
    if (first || last) spec.aeth = wire::Aeth::ack(msn_);
    std::span<uint8_t> payload;
    pkt = build(spec, len, payload);
    if (len && !read_for_response(r, payload)) {
      responder_error(Verdict::kAccess);
      return;
    }
    r.offset += len;
    r.psn = psn_add(r.psn, 1);
    if (last) responses_.pop();
  }
  respond_free_at_ = std::max(send(std::move(pkt)), s.now());
  if (!responses_.empty()) respond_event_ = s.schedule_at(respond_free_at_, [this]() { pump_respond(); });
}

bool ConnectedQp::read_for_response(Response& r, std::span<uint8_t> out) {
  const uint32_t chunk = r.memory->read_ahead();
  if (chunk == 0) return r.memory->read(r.addr + r.offset, out);
  ReadAhead& reads = hca_.response_reads();
  if (r.read_key == 0) r.read_key = reads.next_key();
  return reads.read(r.read_key, r.offset, r.length, chunk, out,
                    [&](uint64_t from, std::span<uint8_t> to) { return r.memory->read(r.addr + from, to); });
}

}  // namespace ibfab::fabric::rc
