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
#include "fabric/model/fabric.h"
#include "fabric/model/port.h"
#include "sim/simulator.h"

namespace ibfab::api {

using rings::Cqe;
using rings::CqRing;
using rings::QpRings;
using rings::SendWqe;

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

class VerbsContext final : public fabric::PortEventListener {
 public:
  VerbsContext(VerbsService& service, fabric::Hca& hca, int async_fd)
      : service_(service), hca_(hca), async_fd_(async_fd) {
    hca_.add_listener(this);
  }
  ~VerbsContext() override {
    for (auto& [qpn, qp] : qps_) {
      hca_.destroy_qp(qpn);
      std::erase(service_.qps_, qp.get());
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
    return work;
  }
  bool posted() const {
    for (const auto& [qpn, qp] : qps_)
      if (qp->posted()) return true;
    return false;
  }
  bool ordered_by_caller() const { return ordered_by_caller_; }
  void set_ordered_by_caller(bool on) {
    ordered_by_caller_ = on;
    for (auto& [qpn, qp] : qps_) qp->set_stamped(on);
  }
  fabric::Hca& hca() { return hca_; }
  VerbsService& service() { return service_; }

 private:
  int64_t create_channel(ReceivedFds& fds);
  int64_t create_cq(const CreateCq& req, ReceivedFds& fds);
  int64_t create_qp(const CreateQp& req, ReceivedFds& fds);
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
  std::map<uint32_t, std::unique_ptr<Channel>> channels_;
  std::map<uint32_t, std::unique_ptr<VerbsService::Cq>> cqs_;
  std::map<uint32_t, std::unique_ptr<VerbsService::Qp>> qps_;  // by QP number
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

int64_t VerbsContext::modify_qp(const ModifyQp& req) {
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

VerbsContext* VerbsService::open(fabric::Hca& hca, int async_fd) {
  contexts_.push_back(std::make_unique<VerbsContext>(*this, hca, async_fd));
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
