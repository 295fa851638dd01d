#include "api/server/verbs_service.h"

#include <infiniband/verbs.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <cerrno>
#include <cstring>

#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/verbs_memory.h"
#include "fabric/model/fabric.h"
#include "fabric/model/port.h"
#include "sim/simulator.h"

namespace ibfab::api {

using rings::ConnectedWqe;
using rings::Cqe;
using rings::CqRing;
using rings::QpRings;
using rings::RecvWqe;
using rings::RingSge;
using rings::SendWqe;

static_assert(fabric::qp_mask::kState == IBV_QP_STATE && fabric::qp_mask::kAccessFlags == IBV_QP_ACCESS_FLAGS &&
              fabric::qp_mask::kPkeyIndex == IBV_QP_PKEY_INDEX && fabric::qp_mask::kPort == IBV_QP_PORT &&
              fabric::qp_mask::kAv == IBV_QP_AV && fabric::qp_mask::kPathMtu == IBV_QP_PATH_MTU &&
              fabric::qp_mask::kTimeout == IBV_QP_TIMEOUT && fabric::qp_mask::kRetryCnt == IBV_QP_RETRY_CNT &&
              fabric::qp_mask::kRnrRetry == IBV_QP_RNR_RETRY && fabric::qp_mask::kRqPsn == IBV_QP_RQ_PSN &&
              fabric::qp_mask::kMaxQpRdAtomic == IBV_QP_MAX_QP_RD_ATOMIC &&
              fabric::qp_mask::kMinRnrTimer == IBV_QP_MIN_RNR_TIMER && fabric::qp_mask::kSqPsn == IBV_QP_SQ_PSN &&
              fabric::qp_mask::kMaxDestRdAtomic == IBV_QP_MAX_DEST_RD_ATOMIC &&
              fabric::qp_mask::kDestQpn == IBV_QP_DEST_QPN);
static_assert(fabric::wr_opcode::kRdmaWrite == IBV_WR_RDMA_WRITE && fabric::wr_opcode::kSend == IBV_WR_SEND &&
              fabric::wr_opcode::kRdmaRead == IBV_WR_RDMA_READ &&
              fabric::wr_opcode::kAtomicFetchAndAdd == IBV_WR_ATOMIC_FETCH_AND_ADD &&
              fabric::wr_opcode::kSendWithInv == IBV_WR_SEND_WITH_INV);
static_assert(fabric::send_flag::kInline == IBV_SEND_INLINE && fabric::send_flag::kSignaled == IBV_SEND_SIGNALED &&
              fabric::send_flag::kSolicited == IBV_SEND_SOLICITED && fabric::send_flag::kFence == IBV_SEND_FENCE);
static_assert(fabric::wc_status::kRemAccessErr == IBV_WC_REM_ACCESS_ERR &&
              fabric::wc_status::kWrFlushErr == IBV_WC_WR_FLUSH_ERR &&
              fabric::wc_status::kRnrRetryExcErr == IBV_WC_RNR_RETRY_EXC_ERR);
static_assert(fabric::wc_opcode::kRecvRdmaWithImm == IBV_WC_RECV_RDMA_WITH_IMM &&
              fabric::wc_opcode::kFetchAdd == IBV_WC_FETCH_ADD && fabric::wc_flag::kWithInv == IBV_WC_WITH_INV &&
              fabric::wc_flag::kWithImm == IBV_WC_WITH_IMM && fabric::wc_flag::kGrh == IBV_WC_GRH);

namespace {

// Writes a record on a non-blocking socket the client reads; a client
// that does not read loses records, never the engine its time.
void write_record(int fd, const void* data, std::size_t size) {
  if (fd >= 0) (void)::send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
}

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ibv_event_type to_verbs(fabric::PortEvent e) {
  switch (e) {
    case fabric::PortEvent::Active: return IBV_EVENT_PORT_ACTIVE;
    case fabric::PortEvent::Error: return IBV_EVENT_PORT_ERR;
    case fabric::PortEvent::LidChange: return IBV_EVENT_LID_CHANGE;
    case fabric::PortEvent::PkeyChange: return IBV_EVENT_PKEY_CHANGE;
    case fabric::PortEvent::SmChange: return IBV_EVENT_SM_CHANGE;
    case fabric::PortEvent::ClientReregister: return IBV_EVENT_CLIENT_REREGISTER;
  }
  return IBV_EVENT_DEVICE_FATAL;
}

}  // namespace

struct Channel {
  int fd = -1;
  ~Channel() {
    if (fd >= 0) ::close(fd);
  }
};

class VerbsService::Cq {
 public:
  Cq(VerbsContext& ctx, SharedMemory mem, uint32_t depth, Channel* channel, uint64_t user_handle)
      : ctx_(ctx), mem_(std::move(mem)), ring_(mem_.as<CqRing>()), depth_(depth), channel_(channel),
        user_handle_(user_handle) {}
  // Writes a completion; false (and the CQ in overrun) when it is full.
  bool push(const Cqe& e, bool solicited);
  uint32_t users = 0;  // QPs that complete here
  Channel* channel() const { return channel_; }

 private:
  VerbsContext& ctx_;
  SharedMemory mem_;
  CqRing* ring_;
  uint32_t depth_;
  uint32_t head_ = 0;
  bool overrun_ = false;
  Channel* channel_;
  uint64_t user_handle_;
};

class VerbsService::Qp final : public fabric::UdEndpoint {
 public:
  Qp(VerbsContext& ctx, sim::Simulator& sim, uint32_t qpn, SharedMemory mem, const CreateQp& req, Cq* scq, Cq* rcq)
      : ctx_(ctx), qpn_(qpn), mem_(std::move(mem)), rings_(mem_.as<QpRings>()), req_(req), scq_(scq), rcq_(rcq),
        sim_(sim) {
    rings_->state.value.store(IBV_QPS_RESET, std::memory_order_release);
  }
  ~Qp() override { sim_.cancel(completing_timer_); }
  uint32_t qpn() const { return qpn_; }
  uint8_t state() const { return state_; }
  void set_state(uint8_t s);
  Cq* send_cq() const { return scq_; }
  Cq* recv_cq() const { return rcq_; }
  // Sends what was posted before `limit` (program_clock_ns), or flushes
  // everything in the error state, and places held messages; true if
  // there was work.
  bool run(uint64_t limit = UINT64_MAX);
  bool posted() const { return rings_->sq_head.value.load(std::memory_order_acquire) != sq_tail_; }
  void set_stamped(bool on) { rings_->stamped.value.store(on ? 1 : 0, std::memory_order_release); }
  const VerbsContext& context() const { return ctx_; }
  bool on_receive(const fabric::UdMessage& msg) override;

 private:
  // A message that found no receive posted, waiting (up to the service's
  // receive grace) for one; at most kHeldPerReceive times the receive
  // queue's depth wait.
  static constexpr std::size_t kHeldPerReceive = 4;
  struct Held {
    Cqe cqe;
    bool solicited = false;
    std::vector<uint8_t> bytes;  // the GRH slot (40 bytes) and the payload
    int64_t until_ns = 0;
  };
  bool receive_posted() const {
    const uint32_t posted = rings_->rq_posted.value.load(std::memory_order_acquire);
    return posted != rq_taken_ && posted - rq_taken_ <= req_.rq_depth;
  }
  // Writes a message into the next receive slot and completes it; false if
  // the CQ overran.
  bool place(const Cqe& c, const uint8_t* grh, std::span<const uint8_t> payload, bool solicited);
  bool place_held();
  void flush();
  // Writes a send completion once its message has left the port (`at`,
  // simulated time), and never before an earlier send's: completions of
  // one send queue keep posting order, errors and flushes included.
  void complete_send(const Cqe& c, sim::Time at);
  void complete_due();
  Cqe completion() const {
    Cqe c;
    c.qp_handle = req_.user_handle;
    c.qp_num = qpn_;
    return c;
  }

  VerbsContext& ctx_;
  uint32_t qpn_;
  SharedMemory mem_;
  QpRings* rings_;
  CreateQp req_;
  Cq* scq_;
  Cq* rcq_;
  uint8_t state_ = IBV_QPS_RESET;
  uint32_t sq_tail_ = 0;
  uint32_t rq_taken_ = 0;
  std::deque<Held> held_;
  struct Completing {
    sim::Time at;
    Cqe cqe;
  };
  std::deque<Completing> completing_;  // send completions not yet due, times non-decreasing
  sim::EventHandle completing_timer_;  // pending while completing_ is not empty
  sim::Simulator& sim_;
};


// Moves the receive WQEs a client posted in `rings`' receive ring (depth,
// slot size and SGE limit as the engine sized them) into the model through
// `post` (a post_recv); `taken` is the engine's count. 0: nothing posted,
// 1: work done, -1: the ring holds what no library writes.
template <class Post>
int take_receive_ring(QpRings* rings, uint32_t& taken, uint32_t sq_depth, uint32_t sq_slot, uint32_t depth,
                      uint32_t slot, uint32_t max_sge, std::vector<fabric::Sge>& sges, Post post) {
  const uint32_t posted = rings->rq_posted.value.load(std::memory_order_acquire);
  if (posted == taken) return 0;
  if (posted - taken > depth) return -1;
  while (taken != posted) {
    const uint8_t* s = rings->recv_slot(taken, sq_depth, sq_slot, depth, slot);
    RecvWqe w;
    std::memcpy(&w, s, sizeof w);
    if (w.num_sge > max_sge || sizeof w + std::size_t{w.num_sge} * sizeof(RingSge) > slot) return -1;
    for (uint32_t i = 0; i < w.num_sge; ++i) {
      RingSge r;
      std::memcpy(&r, s + sizeof w + i * sizeof(RingSge), sizeof r);
      sges[i] = {r.addr, r.length, r.lkey};
    }
    fabric::RecvWr r;
    r.wr_id = w.wr_id;
    r.num_sge = w.num_sge;
    r.sge = sges.data();
    const int e = post(r);
    if (e == ENOMEM) break;  // more than the client may have outstanding: taken when room is made
    if (e != 0) return -1;
    rings->rq_taken.value.store(++taken, std::memory_order_release);
  }
  return 1;
}

// A shared receive queue: the model's SRQ, fed from the client's ring.
class VerbsService::SharedRq final : public fabric::QpEndpoint {
 public:
  SharedRq(VerbsContext& ctx, SharedMemory mem, const CreateSrq& req)
      : ctx_(ctx), mem_(std::move(mem)), rings_(mem_.as<QpRings>()), req_(req), sges_(req.max_sge) {}
  uint32_t create();
  uint32_t srqn() const { return srqn_; }
  bool run();
  const VerbsContext& context() const { return ctx_; }
  void on_send_completion(const fabric::WorkCompletion&) override {}
  void on_recv_completion(const fabric::WorkCompletion&) override {}
  void on_qp_event(uint8_t event) override;

 private:
  VerbsContext& ctx_;
  SharedMemory mem_;
  QpRings* rings_;
  CreateSrq req_;
  uint32_t srqn_ = 0;
  uint32_t taken_ = 0;
  bool broken_ = false;  // its ring held what no library writes: it takes no more
  std::vector<fabric::Sge> sges_;
};

// An RC or UC QP: a connected QP of the HCA model. The engine moves the
// client's posted WQEs from the rings into the model's queues (SGEs and
// inline bytes are copied there; the data is read from the application's
// memory when the packets are built) and the model's completions into the
// CQ rings.
class VerbsService::ConnectedQp final : public fabric::QpEndpoint {
 public:
  ConnectedQp(VerbsContext& ctx, SharedMemory mem, const CreateQp& req, Cq* scq, Cq* rcq)
      : ctx_(ctx), mem_(std::move(mem)), rings_(mem_.as<QpRings>()), req_(req), scq_(scq), rcq_(rcq),
        wr_ids_(req.sq_depth), sges_(std::max(req.max_send_sge, req.max_recv_sge)) {
    rings_->state.value.store(IBV_QPS_RESET, std::memory_order_release);
  }
  // The model's QP; 0 if it refused (no such PD).
  uint32_t create();
  uint32_t qpn() const { return qpn_; }
  Cq* send_cq() const { return scq_; }
  Cq* recv_cq() const { return rcq_; }
  int modify(const ModifyQp& m);
  bool run(uint64_t limit = UINT64_MAX);
  bool posted() const { return rings_->sq_head.value.load(std::memory_order_acquire) != sq_tail_; }
  void set_stamped(bool on) { rings_->stamped.value.store(on ? 1 : 0, std::memory_order_release); }
  const VerbsContext& context() const { return ctx_; }

  void on_send_completion(const fabric::WorkCompletion& wc) override;
  void on_recv_completion(const fabric::WorkCompletion& wc) override;
  void on_qp_event(uint8_t event) override;

 private:
  // The SGEs after a WQE header in `slot`, copied out (the client may
  // rewrite its shared memory at any time); false if they do not fit.
  bool copy_sges(const uint8_t* slot, std::size_t header, uint32_t n, uint32_t max, uint32_t slot_size);
  bool take_receives();
  bool take_sends(uint64_t limit);
  // A ring the client wrote what no library writes: the QP goes to error.
  void fatal();
  void sync_state();
  Cqe completion(const fabric::WorkCompletion& wc) const;

  VerbsContext& ctx_;
  SharedMemory mem_;
  QpRings* rings_;
  CreateQp req_;
  Cq* scq_;
  Cq* rcq_;
  uint32_t qpn_ = 0;
  uint32_t sq_tail_ = 0;
  uint32_t rq_taken_ = 0;
  std::vector<uint64_t> wr_ids_;     // by send ring counter: the application's wr_id
  std::vector<fabric::Sge> sges_;    // one WQE's SGEs on their way to the model
  std::vector<uint8_t> inline_;      // one WQE's inline bytes on their way
};

class VerbsContext final : public fabric::PortEventListener {
 public:
  VerbsContext(VerbsService& service, fabric::Hca& hca, int async_fd, pid_t pid)
      : service_(service), hca_(hca), async_fd_(async_fd),
        memory_(hca, pid, [&service](const std::string& why) { service.log(why); }) {
    hca_.add_listener(this);
  }
  ~VerbsContext() override {
    for (auto& [qpn, qp] : qps_) {
      hca_.destroy_qp(qpn);
      std::erase(service_.qps_, qp.get());
    }
    for (auto& [qpn, qp] : connected_) {
      hca_.destroy_qp(qpn);
      std::erase(service_.connected_, qp.get());
    }
    for (auto& [h, srq] : srqs_) {
      (void)hca_.destroy_srq(srq->srqn());
      std::erase(service_.srqs_, srq.get());
    }
    hca_.remove_listener(this);
    if (async_fd_ >= 0) ::close(async_fd_);
  }

  void on_port_event(fabric::Hca&, uint8_t port, fabric::PortEvent event) override {
    AsyncEvent e;
    e.type = to_verbs(event);
    e.port = port;
    write_record(async_fd_, &e, sizeof e);
  }
  void object_event(ibv_event_type type, uint64_t user_handle) const {
    AsyncEvent e;
    e.type = type;
    e.user_handle = user_handle;
    write_record(async_fd_, &e, sizeof e);
  }

  int64_t handle(MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds);
  bool run_rings(uint64_t limit) {
    bool work = false;
    for (auto& [qpn, qp] : qps_) work |= qp->run(limit);
    for (auto& [h, srq] : srqs_) work |= srq->run();
    for (auto& [qpn, qp] : connected_) work |= qp->run(limit);
    return work;
  }
  bool posted() const {
    for (const auto& [qpn, qp] : qps_)
      if (qp->posted()) return true;
    for (const auto& [qpn, qp] : connected_)
      if (qp->posted()) return true;
    return false;
  }
  bool ordered_by_caller() const { return ordered_by_caller_; }
  void set_ordered_by_caller(bool on) {
    ordered_by_caller_ = on;
    for (auto& [qpn, qp] : qps_) qp->set_stamped(on);
    for (auto& [qpn, qp] : connected_) qp->set_stamped(on);
  }
  fabric::Hca& hca() { return hca_; }
  VerbsService& service() { return service_; }

 private:
  int64_t create_channel(ReceivedFds& fds);
  int64_t create_cq(const CreateCq& req, ReceivedFds& fds);
  int64_t create_qp(const CreateQp& req, ReceivedFds& fds);
  int64_t create_connected_qp(const CreateQp& req, ReceivedFds& fds, VerbsService::Cq* scq,
                              VerbsService::Cq* rcq);
  int64_t modify_qp(const ModifyQp& req);
  int64_t destroy(MsgType type, uint32_t handle);
  int64_t mcast(MsgType type, const McastRequest& req);
  template <class Map>
  static auto* find(Map& m, uint32_t handle) {
    auto it = m.find(handle);
    return it == m.end() ? nullptr : it->second.get();
  }

  VerbsService& service_;
  fabric::Hca& hca_;
  int async_fd_;
  bool ordered_by_caller_ = false;  // its rings are taken in program order by the engine (a MAD port is open)
  uint32_t next_handle_ = 1;
  VerbsMemory memory_;  // before the QPs, which go first
  std::map<uint32_t, std::unique_ptr<Channel>> channels_;
  std::map<uint32_t, std::unique_ptr<VerbsService::Cq>> cqs_;
  std::map<uint32_t, std::unique_ptr<VerbsService::Qp>> qps_;  // by QP number
  std::map<uint32_t, std::unique_ptr<VerbsService::ConnectedQp>> connected_;  // by QP number
  std::map<uint32_t, std::unique_ptr<VerbsService::SharedRq>> srqs_;  // by handle
  int64_t create_srq(const CreateSrq& req, ReceivedFds& fds);
  int64_t modify_srq(const ModifySrq& req);
  int64_t destroy_srq(uint32_t handle);
};

// --- Cq ---

bool VerbsService::Cq::push(const Cqe& e, bool solicited) {
  // An overrun CQ is in error for good: it takes no more completions.
  if (overrun_ || head_ - ring_->tail.value.load(std::memory_order_acquire) >= depth_) {
    ring_->overrun.value.store(1, std::memory_order_release);
    if (!overrun_) ctx_.object_event(IBV_EVENT_CQ_ERR, user_handle_);
    overrun_ = true;
    return false;
  }
  ring_->entries()[head_ & (depth_ - 1)] = e;
  ring_->head.value.store(++head_, std::memory_order_release);
  // A completion event for an armed CQ: any completion for "next", a
  // solicited one or an error for "solicited only". The fence pairs with
  // the client's after it arms: either this sees the arm, or the client's
  // poll after arming sees this completion; never neither.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint32_t armed = ring_->armed.value.load(std::memory_order_acquire);
  const bool fire = armed == CqRing::kArmNext ||
                    (armed == CqRing::kArmSolicited && (solicited || e.status != IBV_WC_SUCCESS));
  if (fire && channel_ && ring_->armed.value.compare_exchange_strong(armed, 0)) {
    write_record(channel_->fd, &user_handle_, sizeof user_handle_);
  }
  return true;
}

// --- Qp ---

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

// --- ConnectedQp ---

uint32_t VerbsService::ConnectedQp::create() {
  fabric::QpCaps caps;
  caps.max_send_wr = req_.sq_depth;
  caps.max_recv_wr = req_.rq_depth;
  caps.max_send_sge = req_.max_send_sge;
  caps.max_recv_sge = req_.max_recv_sge;
  caps.max_inline_data = req_.max_inline_data;
  const fabric::Transport t = req_.qp_type == IBV_QPT_RC ? fabric::Transport::kRc : fabric::Transport::kUc;
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
  rings_->state.value.store(static_cast<uint32_t>(ctx_.hca().qp_state(qpn_)), std::memory_order_release);
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
  if (ctx_.hca().qp_state(qpn_) == fabric::QpState::kReset) return false;
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
  Cqe c = completion(wc);
  c.flags |= Cqe::kReceive;
  c.wr_id = wc.wr_id;
  c.src_qp = wc.src_qp;
  c.slid = wc.slid;
  c.sl = wc.sl;
  c.pkey_index = wc.pkey_index;
  c.dlid_path_bits = wc.dlid_path_bits;
  c.imm_data = wc.imm_data;
  if (wc.wc_flags & fabric::wc_flag::kGrh) c.flags |= Cqe::kGrh;
  if (wc.wc_flags & fabric::wc_flag::kWithImm) c.flags |= Cqe::kImmediate;
  if (wc.wc_flags & fabric::wc_flag::kWithInv) c.flags |= Cqe::kInvalidate;
  rcq_->push(c, false);
  if (wc.status != IBV_WC_SUCCESS) sync_state();
}

void VerbsService::ConnectedQp::on_qp_event(uint8_t event) {
  sync_state();
  ctx_.object_event(static_cast<ibv_event_type>(event), req_.user_handle);
}

// --- SharedRq ---

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

// --- VerbsContext ---

int64_t VerbsContext::handle(MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
  switch (type) {
    case MsgType::CreateChannel:
      if (!body_as<CreateChannel>(msg, type)) break;
      return create_channel(fds);
    case MsgType::CreateCq:
      if (auto r = body_as<CreateCq>(msg, type)) return create_cq(*r, fds);
      break;
    case MsgType::CreateQp:
      if (auto r = body_as<CreateQp>(msg, type)) return create_qp(*r, fds);
      break;
    case MsgType::ModifyQp:
      if (auto r = body_as<ModifyQp>(msg, type)) return modify_qp(*r);
      break;
    case MsgType::DestroyChannel:
    case MsgType::DestroyCq:
    case MsgType::DestroyQp:
      if (auto r = body_as<DestroyObject>(msg, type)) return destroy(type, r->handle);
      break;
    case MsgType::AttachMcast:
    case MsgType::DetachMcast:
      if (auto r = body_as<McastRequest>(msg, type)) return mcast(type, *r);
      break;
    case MsgType::AllocPd:
      if (body_as<AllocPd>(msg, type)) return memory_.alloc_pd();
      break;
    case MsgType::DeallocPd:
      if (auto r = body_as<DestroyObject>(msg, type)) return memory_.dealloc_pd(r->handle);
      break;
    case MsgType::RegMr:
      if (auto r = body_as<RegMr>(msg, type)) return memory_.reg_mr(*r);
      break;
    case MsgType::ReregMr:
      if (auto r = body_as<ReregMr>(msg, type)) return memory_.rereg_mr(*r);
      break;
    case MsgType::DeregMr:
      if (auto r = body_as<DestroyObject>(msg, type)) return memory_.dereg_mr(r->handle);
      break;
    case MsgType::AllocMw:
      if (auto r = body_as<AllocMw>(msg, type)) return memory_.alloc_mw(*r);
      break;
    case MsgType::DeallocMw:
      if (auto r = body_as<DestroyObject>(msg, type)) return memory_.dealloc_mw(r->handle);
      break;
    case MsgType::CreateSrq:
      if (auto r = body_as<CreateSrq>(msg, type)) return create_srq(*r, fds);
      break;
    case MsgType::ModifySrq:
      if (auto r = body_as<ModifySrq>(msg, type)) return modify_srq(*r);
      break;
    case MsgType::DestroySrq:
      if (auto r = body_as<DestroyObject>(msg, type)) return destroy_srq(r->handle);
      break;
    default:
      break;
  }
  return -EINVAL;
}

int64_t VerbsContext::create_channel(ReceivedFds& fds) {
  if (fds.count != 1) return -EINVAL;
  auto ch = std::make_unique<Channel>();
  ch->fd = fds.take(0);
  const uint32_t h = next_handle_++;
  channels_.emplace(h, std::move(ch));
  return h;
}

int64_t VerbsContext::create_cq(const CreateCq& req, ReceivedFds& fds) {
  Channel* ch = nullptr;
  if (req.channel && !(ch = find(channels_, req.channel))) return -EINVAL;
  if (fds.count != 1 || req.depth == 0 || req.depth > rings::kMaxDepth || rings::ring_depth(req.depth) != req.depth)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), CqRing::bytes(req.depth))) return e;
  const uint32_t h = next_handle_++;
  cqs_.emplace(h, std::make_unique<VerbsService::Cq>(*this, std::move(mem), req.depth, ch, req.user_handle));
  return h;
}

int64_t VerbsContext::create_qp(const CreateQp& req, ReceivedFds& fds) {
  VerbsService::Cq* scq = find(cqs_, req.send_cq);
  VerbsService::Cq* rcq = find(cqs_, req.recv_cq);
  if (req.qp_type == IBV_QPT_RC || req.qp_type == IBV_QPT_UC) return create_connected_qp(req, fds, scq, rcq);
  const auto good_depth = [](uint32_t d) { return d > 0 && d <= rings::kMaxDepth && rings::ring_depth(d) == d; };
  if (!scq || !rcq || fds.count != 1 || !good_depth(req.sq_depth) || !good_depth(req.rq_depth) ||
      req.sq_slot < sizeof(SendWqe) || req.sq_slot > sizeof(SendWqe) + rings::kMaxUdPayload ||
      req.rq_slot < rings::kGrhBytes || req.rq_slot > rings::kGrhBytes + rings::kMaxUdPayload)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), QpRings::bytes(req.sq_depth, req.sq_slot, req.rq_depth, req.rq_slot)))
    return e;
  const uint32_t qpn = hca_.create_ud_qp(1, 0, 0, nullptr, req.block_self_mcast_lb != 0);
  auto qp = std::make_unique<VerbsService::Qp>(*this, hca_.fabric().sim(), qpn, std::move(mem), req, scq, rcq);
  qp->set_stamped(ordered_by_caller_);
  if (req.qp_type == IBV_QPT_UD) hca_.set_endpoint(qpn, qp.get());
  scq->users++;
  rcq->users++;
  service_.qps_.push_back(qp.get());
  qps_.emplace(qpn, std::move(qp));
  return qpn;
}

int64_t VerbsContext::create_connected_qp(const CreateQp& req, ReceivedFds& fds, VerbsService::Cq* scq,
                                          VerbsService::Cq* rcq) {
  const auto good_depth = [](uint32_t d) { return d > 0 && d <= rings::kMaxDepth && rings::ring_depth(d) == d; };
  // The slots hold a WQE and what the QP's limits let follow it.
  const uint64_t sq_need = sizeof(ConnectedWqe) + std::max<uint64_t>(uint64_t{req.max_send_sge} * sizeof(RingSge),
                                                                      req.max_inline_data);
  const uint64_t rq_need = sizeof(RecvWqe) + uint64_t{req.max_recv_sge} * sizeof(RingSge);
  constexpr uint32_t kMaxSlot = sizeof(SendWqe) + rings::kMaxUdPayload;
  if (!scq || !rcq || fds.count != 1 || !good_depth(req.sq_depth) || !good_depth(req.rq_depth) ||
      !memory_.has_pd(req.pd) || req.max_send_sge > 64 || req.max_recv_sge > 64 || req.max_inline_data > 2048 ||
      (req.srq != 0 && !find(srqs_, req.srq)) ||
      req.sq_slot < sq_need || req.sq_slot > kMaxSlot || req.rq_slot < rq_need || req.rq_slot > kMaxSlot)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), QpRings::bytes(req.sq_depth, req.sq_slot, req.rq_depth, req.rq_slot)))
    return e;
  CreateQp model = req;
  if (req.srq != 0) model.srq = find(srqs_, req.srq)->srqn();
  auto qp = std::make_unique<VerbsService::ConnectedQp>(*this, std::move(mem), model, scq, rcq);
  const uint32_t qpn = qp->create();
  if (qpn == 0) return -EINVAL;
  qp->set_stamped(ordered_by_caller_);
  scq->users++;
  rcq->users++;
  service_.connected_.push_back(qp.get());
  connected_.emplace(qpn, std::move(qp));
  return qpn;
}

int64_t VerbsContext::create_srq(const CreateSrq& req, ReceivedFds& fds) {
  const bool good_depth = req.depth > 0 && req.depth <= rings::kMaxDepth && rings::ring_depth(req.depth) == req.depth;
  if (fds.count != 1 || !good_depth || !memory_.has_pd(req.pd) || req.max_sge > 64 ||
      req.slot < sizeof(RecvWqe) + std::size_t{req.max_sge} * sizeof(RingSge) ||
      req.slot > sizeof(SendWqe) + rings::kMaxUdPayload)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), QpRings::bytes(0, 0, req.depth, req.slot))) return e;
  auto srq = std::make_unique<VerbsService::SharedRq>(*this, std::move(mem), req);
  if (srq->create() == 0) return -EINVAL;
  const uint32_t h = next_handle_++;
  service_.srqs_.push_back(srq.get());
  srqs_.emplace(h, std::move(srq));
  return h;
}

int64_t VerbsContext::modify_srq(const ModifySrq& req) {
  VerbsService::SharedRq* srq = find(srqs_, req.srq);
  return srq ? -hca_.arm_srq_limit(srq->srqn(), req.limit) : -EINVAL;
}

int64_t VerbsContext::destroy_srq(uint32_t handle) {
  auto it = srqs_.find(handle);
  if (it == srqs_.end()) return -EINVAL;
  if (const int e = hca_.destroy_srq(it->second->srqn())) return -e;
  std::erase(service_.srqs_, it->second.get());
  srqs_.erase(it);
  return 0;
}

int64_t VerbsContext::modify_qp(const ModifyQp& req) {
  if (VerbsService::ConnectedQp* cqp = find(connected_, req.qp_num)) {
    if (req.set_pkey_index || (req.mask & IBV_QP_PKEY_INDEX)) {
      const uint8_t port = (req.mask & IBV_QP_PORT) ? req.port : hca_.qp_port(cqp->qpn());
      if (port >= 1 && port <= hca_.num_ports() && req.pkey_index >= hca_.port(port).pkeys.size()) return -EINVAL;
    }
    return -cqp->modify(req);
  }
  VerbsService::Qp* qp = find(qps_, req.qp_num);
  if (!qp || req.state > IBV_QPS_ERR) return -EINVAL;
  if (req.set_port && (req.port < 1 || req.port > hca_.num_ports())) return -EINVAL;
  if (req.set_port || req.set_pkey_index) {
    const uint8_t port = req.set_port ? req.port : hca_.qp_port(qp->qpn());
    if (req.set_pkey_index && req.pkey_index >= hca_.port(port).pkeys.size()) return -EINVAL;
    hca_.set_qp_port(qp->qpn(), port, req.set_pkey_index ? req.pkey_index : hca_.qp_pkey_index(qp->qpn()));
  }
  if (req.set_qkey) hca_.set_qkey(qp->qpn(), req.qkey);
  qp->set_state(req.state);
  return 0;
}

int64_t VerbsContext::destroy(MsgType type, uint32_t handle) {
  if (type == MsgType::DestroyQp) {
    if (auto c = connected_.find(handle); c != connected_.end()) {
      hca_.destroy_qp(handle);
      c->second->send_cq()->users--;
      c->second->recv_cq()->users--;
      std::erase(service_.connected_, c->second.get());
      connected_.erase(c);
      return 0;
    }
    auto it = qps_.find(handle);
    if (it == qps_.end()) return -EINVAL;
    hca_.destroy_qp(handle);
    it->second->send_cq()->users--;
    it->second->recv_cq()->users--;
    std::erase(service_.qps_, it->second.get());
    qps_.erase(it);
    return 0;
  }
  if (type == MsgType::DestroyCq) {
    auto it = cqs_.find(handle);
    if (it == cqs_.end()) return -EINVAL;
    if (it->second->users) return -EBUSY;
    cqs_.erase(it);
    return 0;
  }
  auto it = channels_.find(handle);
  if (it == channels_.end()) return -EINVAL;
  for (const auto& [h, cq] : cqs_)
    if (cq->channel() == it->second.get()) return -EBUSY;
  channels_.erase(it);
  return 0;
}

int64_t VerbsContext::mcast(MsgType type, const McastRequest& req) {
  if (!find(qps_, req.qp_num)) return -EINVAL;
  std::array<uint8_t, 16> gid;
  std::memcpy(gid.data(), req.gid, 16);
  const int e = type == MsgType::AttachMcast ? hca_.attach_mcast(req.qp_num, gid, req.lid)
                                             : hca_.detach_mcast(req.qp_num, gid, req.lid);
  return -e;
}

// --- VerbsService ---

VerbsService::VerbsService() {
  doorbell_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  page_.create(sizeof(rings::EnginePage), "ibfab-engine");
}

VerbsService::~VerbsService() {
  contexts_.clear();
  if (doorbell_ >= 0) ::close(doorbell_);
}

VerbsContext* VerbsService::open(fabric::Hca& hca, int async_fd, pid_t pid) {
  contexts_.push_back(std::make_unique<VerbsContext>(*this, hca, async_fd, pid));
  return contexts_.back().get();
}

void VerbsService::close(VerbsContext* context) {
  std::erase_if(contexts_, [&](const auto& c) { return c.get() == context; });
}

int64_t VerbsService::handle(VerbsContext& context, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
  return context.handle(type, msg, fds);
}

void VerbsService::count_late_drops(const fabric::Hca& hca, std::size_t n) { late_drops_[&hca] += n; }

uint64_t VerbsService::late_drops(const fabric::Hca& hca) const {
  auto it = late_drops_.find(&hca);
  return it == late_drops_.end() ? 0 : it->second;
}

bool VerbsService::run_rings() {
  bool work = false;
  for (Qp* qp : qps_) work |= qp->context().ordered_by_caller() ? qp->posted() : qp->run();
  for (ConnectedQp* qp : connected_) work |= qp->context().ordered_by_caller() ? qp->posted() : qp->run();
  for (SharedRq* srq : srqs_)
    if (!srq->context().ordered_by_caller()) work |= srq->run();
  return work;
}

bool VerbsService::run_rings(VerbsContext& context, uint64_t limit) { return context.run_rings(limit); }

bool VerbsService::posted(const VerbsContext& context) const { return context.posted(); }

void VerbsService::set_ordered_by_caller(VerbsContext& context, bool on) { context.set_ordered_by_caller(on); }

bool VerbsService::prepare_to_sleep() {
  auto* page = page_.as<rings::EnginePage>();
  if (!page) return true;
  page->sleeping.value.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the client's, after it posts
  if (run_rings()) {
    page->sleeping.value.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void VerbsService::woke() {
  if (auto* page = page_.as<rings::EnginePage>()) page->sleeping.value.store(0, std::memory_order_relaxed);
  uint64_t n;
  (void)!::read(doorbell_, &n, sizeof n);
}

}  // namespace ibfab::api
