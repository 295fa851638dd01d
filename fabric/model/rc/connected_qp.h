#pragma once
// A connected QP (RC, UC, or one end of XRC) on the HCA model, per IBTA
// Vol 1 chapter 9 and as a ConnectX behaves. XRC's ends are half QPs with
// RC's reliability: an initiator (XRC_SEND) is a requester whose packets
// carry XRCETH, the target's XRC SRQ number, from each WQE; a target
// (XRC_RECV) is a responder of an XRC domain, with no PD nor receive queue
// of its own: each request names the XRC SRQ that takes it, whose PD
// checks the memory it reaches and whose CQ gets its receive completions.
// One object holds both halves of the QP:
//   requester.cpp  its send queue going out: PSNs, segmentation into
//                  path-MTU packets, READ and atomic requests, ACK and
//                  response handling, retransmission (local ACK timeout,
//                  RNR and sequence-error NAKs), completions in order;
//   responder.cpp  requests coming in: the expected PSN, duplicates, the
//                  receive queue (own or shared), RDMA and atomics on host
//                  memory through the memory table, ACKs, NAKs and READ
//                  responses;
//   connected_qp.cpp  what they share: attributes and state, posting,
//                  the error state and its flush, packet headers.
// Everything runs in simulated time on the fabric's simulator; timers are
// simulator events cancelled when the QP is reset or destroyed. The data
// path allocates nothing: the queues are rings sized at creation.
#include <cstdint>
#include <optional>
#include <vector>

#include "fabric/model/memory_table.h"
#include "fabric/model/packet.h"
#include "fabric/model/qp_attr.h"
#include "fabric/model/rc/response_queue.h"
#include "fabric/model/rc/send_queue.h"
#include "fabric/model/receive_queue.h"
#include "sim/event_handle.h"
#include "sim/time.h"

namespace ibfab::wire {
struct PacketSpec;
struct ParsedPacket;
enum class NakCode : uint8_t;
}  // namespace ibfab::wire

namespace ibfab::fabric {
class Hca;
}

namespace ibfab::fabric::rc {

class ConnectedQp {
 public:
  // PSNs a requester has sent and not had acknowledged, at most (a READ
  // counts its responses); a message's packet asks for an ACK at least
  // every kAckRequestEvery packets, so that a long message's ACKs open
  // the window before it closes.
  static constexpr uint32_t kWindow = 256;
  static constexpr uint32_t kAckRequestEvery = 64;

  // `rq` is the QP's receive queue: its own (owned by the caller), or a
  // shared one (`shared`) whose WQEs' SGEs belong to `rq_pd` and whose
  // limit event goes to `srq_endpoint`.
  ConnectedQp(Hca& hca, uint32_t qpn, Transport transport, uint32_t pd, const QpCaps& caps, bool sq_sig_all,
              ReceiveQueue* rq, bool shared, uint32_t rq_pd, QpEndpoint* srq_endpoint, QpEndpoint* endpoint);
  ~ConnectedQp();
  ConnectedQp(const ConnectedQp&) = delete;
  ConnectedQp& operator=(const ConnectedQp&) = delete;

  // Applies what `mask` names and acts on a new state (the caller checked
  // the transition). 0 or EINVAL (no such port).
  int modify(const QpAttr& attr, uint32_t mask);
  QpState state() const { return state_; }
  const QpAttr& attr() const { return attr_; }
  Transport transport() const { return transport_; }
  uint32_t pd() const { return pd_; }
  uint8_t port_number() const { return attr_.port; }
  // An XRC target's domain (0 for the other transports).
  uint32_t xrcd() const { return xrcd_; }
  void set_xrcd(uint32_t xrcd) { xrcd_ = xrcd; }
  // 0, ENOMEM (full), EINVAL (too many SGEs, inline too long, an opcode
  // the transport has not, a QP in RESET or INIT).
  int post_send(const SendWr& wr);
  // The QP's own receive queue (not an SRQ's): 0, ENOMEM, EINVAL.
  int post_recv(const RecvWr& wr);

  // A packet for this QP, its P_Key checked.
  void receive(const wire::ParsedPacket& p);

 private:
  // --- shared (connected_qp.cpp) ---
  // Reliable (RC and both ends of XRC): ACKs, NAKs, READs and atomics.
  bool is_rc() const { return transport_ != Transport::kUc; }
  // The headers of a request packet of WQE `w` (XRC_SEND: with its XRCETH).
  wire::PacketSpec request(uint8_t op, uint32_t psn, bool ack_req, const SendWqe& w) const;
  uint32_t mtu() const;
  uint32_t packets_for(uint32_t bytes) const;
  // Headers for a packet of this QP to its peer.
  wire::PacketSpec header(uint8_t op, uint32_t psn, bool ack_req) const;
  // Packs and sends; returns when the packet has left the port.
  sim::Time transmit(const wire::PacketSpec& spec) { return send(pack(spec)); }
  PacketRef pack(const wire::PacketSpec& spec);
  // The packet for `spec` with room for `payload_size` payload bytes, which
  // the caller reads from host memory straight into `payload` before
  // send(), as the HCA's DMA reads them into the packet it builds.
  PacketRef build(const wire::PacketSpec& spec, uint32_t payload_size, std::span<uint8_t>& payload);
  sim::Time send(PacketRef pkt);
  // Bytes [offset, offset + out.size()) of send WQE `seq`'s SGEs, read
  // ahead a chunk at a time where the host memory asks for it.
  MemoryFault gather(uint32_t seq, uint32_t offset, std::span<uint8_t> out);
  // Moves to ERR: timers stop, and a zero-delay event flushes both queues
  // (`event`, when not 0, is reported to the owner first). The responses
  // queued are dropped, unless `keep_responses` (the responder's own error:
  // what it owes for earlier requests goes out before its NAK).
  void enter_error(uint8_t event, bool keep_responses = false);
  void schedule_flush();
  void flush();
  void reset();

  // --- requester (requester.cpp) ---
  void pump_send();
  // Sends the packet at the cursor; returns when it has left.
  sim::Time send_packet();
  // LOCAL_INV, BIND_MW: done on the HCA when the cursor reaches them.
  void execute_local(uint32_t seq);
  bool may_send() ;
  void on_response(const wire::ParsedPacket& p);
  void on_read_response(const wire::ParsedPacket& p);
  void on_atomic_ack(const wire::ParsedPacket& p);
  void on_ack(const wire::ParsedPacket& p);
  // Everything through PSN `n` is acknowledged; false when `n` is not in
  // the window of what was sent.
  bool acknowledge_through(uint32_t n);
  void advance_una(uint32_t una);
  void go_back(uint32_t psn);
  // Goes back to `psn` for a response found missing, once until progress.
  void recover(uint32_t psn);
  void complete_in_order();
  void fail(uint32_t seq, uint8_t status);
  // The WQE whose PSNs hold `psn` (or the oldest WQE sent when none).
  uint32_t wqe_holding(uint32_t psn);
  // The local ACK timer: (re)started at each progress, stopped when
  // nothing is outstanding; one simulator event that moves itself on.
  void arm_ack_timer();
  void stop_ack_timer();
  void on_ack_timer();
  void on_ack_timeout();
  void check_drained();
  // The completion of WQE `seq` (build it before the WQE is popped).
  WorkCompletion send_completion(uint32_t seq, uint8_t status);
  bool signalled(uint32_t seq) { return sq_sig_all_ || (sq_.at(seq).flags & send_flag::kSignaled); }

  // --- responder (responder.cpp) ---
  enum class Verdict : uint8_t { kAccepted, kRnr, kInvalid, kAccess, kOperational, kLengthError, kDrop };
  void on_request(const wire::ParsedPacket& p);
  void on_uc_request(const wire::ParsedPacket& p, uint8_t op, int32_t distance);
  void on_duplicate(const wire::ParsedPacket& p, uint8_t op);
  Verdict execute(const wire::ParsedPacket& p, uint8_t op);
  Verdict on_send(const wire::ParsedPacket& p, uint8_t op);
  Verdict on_write(const wire::ParsedPacket& p, uint8_t op);
  Verdict on_read_request(const wire::ParsedPacket& p);
  // The READ response `p` asks for, its R_Key checked; false on a fault.
  bool read_response(const wire::ParsedPacket& p, Response& r);
  // The next out.size() bytes READ response `r` carries, read ahead a
  // chunk at a time where the host memory asks for it; false on a fault.
  bool read_for_response(Response& r, std::span<uint8_t> out);
  Verdict on_atomic(const wire::ParsedPacket& p, uint8_t op);
  bool take_receive();
  // Flushes the posted writes held by `m` (posted_, read_posted_) and
  // forgets it; false when any failed. end_message() also ends the
  // message in progress (done, or abandoned).
  static bool settle(HostMemory*& m);
  void end_message();
  // An XRC target: takes the XRC SRQ a request's XRCETH names as the
  // receive queue (and PD) of what it asks; false when that SRQ does not
  // exist or belongs to another domain.
  bool bind_xrc_srq(const wire::ParsedPacket& p);
  // Where receive completions go: the QP's owner, or an XRC SRQ's CQ.
  QpEndpoint* recv_endpoint();
  void complete_receive(const wire::ParsedPacket& p, uint8_t status, uint8_t opcode, uint8_t flags,
                        uint32_t imm);
  void push_ack();
  void push_nak(uint32_t psn, uint8_t syndrome);
  void responder_error(Verdict v);
  void pump_respond();

  Hca& hca_;
  uint32_t qpn_;
  Transport transport_;
  uint32_t pd_;
  QpCaps caps_;
  bool sq_sig_all_;
  QpEndpoint* ep_;
  QpAttr attr_;
  QpState state_ = QpState::kReset;
  sim::EventHandle ack_timer_, rnr_timer_, send_event_, respond_event_, flush_event_;
  // When the last packet the requester / responder sent has left the port.
  sim::Time send_free_at_, respond_free_at_;
  sim::Time ack_deadline_ = sim::Time::max();  // max: not running
  sim::Time ack_timer_at_;

  // Requester. WQEs [head, assigned_) have PSNs; the cursor is the packet
  // to send next: WQE send_seq_, its packet send_pkt_, PSN cur_psn_.
  SendQueue sq_;
  uint32_t assigned_ = 0;
  uint32_t send_seq_ = 0;
  uint32_t send_pkt_ = 0;
  uint32_t cur_psn_ = 0;
  uint32_t next_psn_ = 0;   // the PSN the next new WQE starts at
  uint32_t una_ = 0;        // the oldest PSN not acknowledged
  uint32_t sent_psn_ = 0;   // one past the latest PSN ever sent
  uint32_t rd_outstanding_ = 0;  // READs and atomics before the cursor, not done
  uint8_t retry_left_ = 0;
  uint8_t rnr_left_ = 0;
  bool rnr_wait_ = false;
  bool recovering_ = false;
  uint32_t recover_psn_ = 0;
  bool draining_ = false;
  bool drained_reported_ = false;
  bool has_error_ = false;   // a WQE failed: err_seq_ completes with err_status_
  uint32_t err_seq_ = 0;
  uint8_t err_status_ = 0;

  // Responder.
  enum class InMessage : uint8_t { kNone, kSend, kWrite };
  ReceiveQueue* rq_;
  bool shared_rq_;
  uint32_t rq_pd_;
  QpEndpoint* srq_ep_;
  uint32_t rdma_pd_;        // the PD that RDMA, atomics and invalidations check (XRC: the SRQ's)
  uint32_t xrcd_ = 0;       // XRC target: its domain
  uint32_t xrc_srqn_ = 0;   // XRC target: the SRQ of the request at hand
  uint32_t epsn_ = 0;
  uint32_t msn_ = 0;
  bool nak_sent_ = false;     // a NAK (sequence or RNR) is out until epsn_ arrives
  bool comm_est_ = false;
  InMessage in_msg_ = InMessage::kNone;
  uint32_t msg_bytes_ = 0;
  bool have_wqe_ = false;     // a receive WQE taken (UC: kept when its message is lost)
  uint64_t recv_wr_id_ = 0;
  std::vector<Sge> recv_sge_;
  uint32_t recv_num_sge_ = 0;
  uint64_t recv_capacity_ = 0;
  HostMemory* write_mem_ = nullptr;  // the RDMA WRITE in progress
  HostMemory* posted_ = nullptr;     // holds posted writes of the message in progress
  HostMemory* read_posted_ = nullptr;  // holds posted writes of the READ responses in progress
  uint64_t write_addr_ = 0;
  uint32_t write_length_ = 0;
  ResponseQueue responses_;
  AtomicCache atomics_;
};

}  // namespace ibfab::fabric::rc
