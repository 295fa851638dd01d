#include "fabric/model/rc/connected_qp.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/model/rc/psn.h"
#include "fabric/wire/packet_codec.h"

namespace ibfab::fabric::rc {

namespace {

[[noreturn]] void built_wrong() {
  throw std::logic_error("ibfab: a connected QP built a packet its opcode does not carry");
}

bool rc_only(uint8_t op) {
  return op == wr_opcode::kRdmaRead || op == wr_opcode::kAtomicCmpAndSwp || op == wr_opcode::kAtomicFetchAndAdd ||
         op == wr_opcode::kSendWithInv;
}

bool carried(uint8_t op) {
  return op == wr_opcode::kSend || op == wr_opcode::kSendWithImm || op == wr_opcode::kRdmaWrite ||
         op == wr_opcode::kRdmaWriteWithImm || op == wr_opcode::kLocalInv || op == wr_opcode::kBindMw ||
         rc_only(op);
}

bool atomic(uint8_t op) { return op == wr_opcode::kAtomicCmpAndSwp || op == wr_opcode::kAtomicFetchAndAdd; }

}  // namespace

ConnectedQp::ConnectedQp(Hca& hca, uint32_t qpn, Transport transport, uint32_t pd, const QpCaps& caps,
                         bool sq_sig_all, ReceiveQueue* rq, bool shared, uint32_t rq_pd, QpEndpoint* srq_endpoint,
                         QpEndpoint* endpoint)
    : hca_(hca),
      qpn_(qpn),
      transport_(transport),
      pd_(pd),
      caps_(caps),
      sq_sig_all_(sq_sig_all),
      ep_(endpoint),
      sq_(caps.max_send_wr, caps.max_send_sge, caps.max_inline_data),
      rq_(rq),
      shared_rq_(shared),
      rq_pd_(rq_pd),
      srq_ep_(srq_endpoint),
      rdma_pd_(pd),
      recv_sge_(rq ? rq->max_sge() : 0) {
  attr_.port = 1;
}

ConnectedQp::~ConnectedQp() {
  sim::Simulator& s = hca_.fabric().sim();
  for (sim::EventHandle h : {ack_timer_, rnr_timer_, send_event_, respond_event_, flush_event_}) s.cancel(h);
}

uint32_t ConnectedQp::mtu() const { return mtu_bytes(attr_.path_mtu >= 1 && attr_.path_mtu <= 5 ? attr_.path_mtu : 1); }

uint32_t ConnectedQp::packets_for(uint32_t bytes) const { return bytes == 0 ? 1 : (bytes + mtu() - 1) / mtu(); }

int ConnectedQp::modify(const QpAttr& a, uint32_t mask) {
  if ((mask & qp_mask::kPort) && (a.port < 1 || a.port > hca_.num_ports())) return EINVAL;
  if (mask & qp_mask::kAccessFlags) attr_.access = a.access;
  if (mask & qp_mask::kPkeyIndex) attr_.pkey_index = a.pkey_index;
  if (mask & qp_mask::kPort) attr_.port = a.port;
  if (mask & qp_mask::kAv) attr_.path = a.path;
  if (mask & qp_mask::kPathMtu) attr_.path_mtu = a.path_mtu;
  if (mask & qp_mask::kTimeout) attr_.timeout = a.timeout;
  if (mask & qp_mask::kRetryCnt) attr_.retry_cnt = a.retry_cnt;
  if (mask & qp_mask::kRnrRetry) attr_.rnr_retry = a.rnr_retry;
  if (mask & qp_mask::kMaxQpRdAtomic) attr_.max_rd_atomic = a.max_rd_atomic;
  if (mask & qp_mask::kMinRnrTimer) attr_.min_rnr_timer = a.min_rnr_timer;
  if (mask & qp_mask::kMaxDestRdAtomic) attr_.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (mask & qp_mask::kDestQpn) attr_.dest_qp_num = a.dest_qp_num & kPsnMask;
  if (mask & qp_mask::kRqPsn) {
    attr_.rq_psn = a.rq_psn & kPsnMask;
    epsn_ = attr_.rq_psn;
  }
  if (mask & qp_mask::kSqPsn) {
    attr_.sq_psn = a.sq_psn & kPsnMask;
    next_psn_ = una_ = cur_psn_ = sent_psn_ = attr_.sq_psn;
  }
  if (!(mask & qp_mask::kState)) return 0;
  attr_.state = a.state;
  switch (a.state) {
    case QpState::kReset:
      reset();
      break;
    case QpState::kInit:
    case QpState::kRtr:
    case QpState::kSqe:
      state_ = a.state;
      break;
    case QpState::kRts:
      if (state_ != QpState::kSqd) {
        retry_left_ = attr_.retry_cnt;
        rnr_left_ = attr_.rnr_retry;
      }
      state_ = QpState::kRts;
      draining_ = false;
      pump_send();
      break;
    case QpState::kSqd:
      state_ = QpState::kSqd;
      draining_ = true;
      drained_reported_ = false;
      check_drained();
      break;
    case QpState::kError:
      enter_error(0);
      break;
  }
  return 0;
}

void ConnectedQp::reset() {
  sim::Simulator& s = hca_.fabric().sim();
  for (sim::EventHandle h : {ack_timer_, rnr_timer_, send_event_, respond_event_, flush_event_}) s.cancel(h);
  ack_deadline_ = sim::Time::max();
  state_ = QpState::kReset;
  sq_.clear();
  assigned_ = send_seq_ = sq_.head();
  send_pkt_ = 0;
  rd_outstanding_ = 0;
  rnr_wait_ = draining_ = drained_reported_ = has_error_ = false;
  if (rq_ && !shared_rq_)
    while (!rq_->empty()) rq_->pop();
  end_message();
  settle(read_posted_);
  have_wqe_ = nak_sent_ = comm_est_ = false;
  msg_bytes_ = msn_ = 0;
  responses_.clear();
  atomics_.clear();
}

int ConnectedQp::post_send(const SendWr& wr) {
  if (state_ == QpState::kReset || state_ == QpState::kInit || transport_ == Transport::kXrcRecv) return EINVAL;
  if (!carried(wr.opcode) || (!is_rc() && rc_only(wr.opcode))) return EINVAL;
  if (atomic(wr.opcode) && ((wr.flags & send_flag::kInline) || wr.num_sge < 1)) return EINVAL;
  if ((wr.flags & send_flag::kInline) && (wr.opcode == wr_opcode::kRdmaRead || atomic(wr.opcode))) return EINVAL;
  if (const int rc = sq_.post(wr)) return rc;
  if (atomic(wr.opcode)) sq_.at(sq_.tail() - 1).length = 8;
  if (state_ == QpState::kError) schedule_flush();
  else pump_send();
  return 0;
}

int ConnectedQp::post_recv(const RecvWr& wr) {
  if (!rq_ || shared_rq_ || state_ == QpState::kReset) return EINVAL;
  if (const int rc = rq_->post(wr)) return rc;
  if (state_ == QpState::kError) schedule_flush();
  return 0;
}

void ConnectedQp::receive(const wire::ParsedPacket& p) {
  const uint8_t op = p.bth.opcode & 0x1f;
  // An XRC initiator takes only responses, a target only requests.
  if (is_rc() && op >= wire::opcode::kRdmaReadResponseFirst && op <= wire::opcode::kAtomicAcknowledge) {
    if (transport_ != Transport::kXrcRecv) on_response(p);
    return;
  }
  if (transport_ != Transport::kXrcSend) on_request(p);
}

wire::PacketSpec ConnectedQp::header(uint8_t op, uint32_t psn, bool ack_req) const {
  const Port& port = hca_.port(attr_.port);
  wire::PacketSpec spec;
  spec.lrh.sl = attr_.path.sl;
  spec.lrh.dlid = attr_.path.dlid;
  spec.lrh.slid = static_cast<uint16_t>(port.lid | (attr_.path.src_path_bits & ((1u << port.lmc) - 1)));
  if (attr_.path.global) {
    wire::Grh g;
    g.tclass = attr_.path.traffic_class;
    g.flow_label = attr_.path.flow_label;
    g.hop_limit = attr_.path.hop_limit;
    g.sgid = wire::Gid::from(port.gid_prefix, port.guid());
    std::memcpy(g.dgid.raw.data(), attr_.path.dgid.data(), 16);
    spec.grh = g;
  }
  const uint8_t t = transport_ == Transport::kRc   ? wire::opcode::kRc
                    : transport_ == Transport::kUc ? wire::opcode::kUc
                                                   : wire::opcode::kXrc;
  spec.bth.opcode = static_cast<uint8_t>(t | op);
  spec.bth.pkey = attr_.pkey_index < port.pkeys.size() ? port.pkeys[attr_.pkey_index] : 0xFFFF;
  spec.bth.dest_qp = attr_.dest_qp_num;
  spec.bth.ack_req = ack_req;
  spec.bth.psn = psn;
  return spec;
}

wire::PacketSpec ConnectedQp::request(uint8_t op, uint32_t psn, bool ack_req, const SendWqe& w) const {
  wire::PacketSpec spec = header(op, psn, ack_req);
  if (transport_ == Transport::kXrcSend) spec.xrc_srqn = w.remote_srqn;
  return spec;
}

PacketRef ConnectedQp::pack(const wire::PacketSpec& spec) {
  Fabric& f = hca_.fabric();
  const std::size_t size =
      wire::packet_size(spec.grh.has_value(), wire::opcode_layout(spec.bth.opcode), spec.payload.size());
  PacketRef pkt = f.packets().make(static_cast<uint32_t>(size));
  if (wire::pack_packet_unsealed(pkt.mutable_bytes(), spec) != size) built_wrong();
  return pkt;
}

PacketRef ConnectedQp::build(const wire::PacketSpec& spec, uint32_t payload_size, std::span<uint8_t>& payload) {
  Fabric& f = hca_.fabric();
  const std::size_t size = wire::packet_size(spec.grh.has_value(), wire::opcode_layout(spec.bth.opcode), payload_size);
  PacketRef pkt = f.packets().make(static_cast<uint32_t>(size));
  if (wire::pack_packet_in_place(pkt.mutable_bytes(), spec, payload_size, payload) != size) built_wrong();
  return pkt;
}

sim::Time ConnectedQp::send(PacketRef pkt) {
  // The CRCs are computed only if the packet is ever observed (a capture).
  pkt.crcs_stale();
  return hca_.transmit_connected(hca_.port(attr_.port), std::move(pkt));
}

void ConnectedQp::enter_error(uint8_t event, bool keep_responses) {
  sim::Simulator& s = hca_.fabric().sim();
  for (sim::EventHandle h : {ack_timer_, rnr_timer_}) s.cancel(h);
  ack_deadline_ = sim::Time::max();
  const bool was_error = state_ == QpState::kError;
  state_ = QpState::kError;
  attr_.state = QpState::kError;
  if (!keep_responses) {
    s.cancel(respond_event_);
    responses_.clear();
  }
  end_message();
  settle(read_posted_);
  if (event != 0 && ep_) ep_->on_qp_event(event);
  if (!was_error && shared_rq_ && transport_ != Transport::kXrcRecv && ep_)
    ep_->on_qp_event(qp_event::kQpLastWqeReached);
  schedule_flush();
}

void ConnectedQp::schedule_flush() {
  sim::Simulator& s = hca_.fabric().sim();
  if (s.pending(flush_event_)) return;
  flush_event_ = s.schedule(sim::Time::zero(), [this]() { flush(); });
}

void ConnectedQp::flush() {
  if (state_ != QpState::kError) return;
  // Every WQE still queued completes, signalled or not: the failed one with
  // its status, the rest with WR_FLUSH_ERR. The queues are popped before
  // each report, so an owner posting from its handler finds them consistent.
  while (!sq_.empty()) {
    const uint32_t seq = sq_.head();
    const uint8_t status = has_error_ && seq == err_seq_ ? err_status_ : wc_status::kWrFlushErr;
    const WorkCompletion wc = send_completion(seq, status);
    sq_.pop();
    if (ep_) ep_->on_send_completion(wc);
  }
  has_error_ = false;
  assigned_ = send_seq_ = sq_.head();
  send_pkt_ = 0;
  rd_outstanding_ = 0;
  WorkCompletion wc;
  wc.status = wc_status::kWrFlushErr;
  wc.opcode = wc_opcode::kRecv;
  wc.qp_num = qpn_;
  if (have_wqe_) {
    have_wqe_ = false;
    wc.wr_id = recv_wr_id_;
    if (QpEndpoint* r = recv_endpoint()) r->on_recv_completion(wc);
  }
  if (rq_ && !shared_rq_) {
    while (!rq_->empty()) {
      wc.wr_id = rq_->front().wr_id;
      rq_->pop();
      if (ep_) ep_->on_recv_completion(wc);
    }
  }
}

}  // namespace ibfab::fabric::rc
