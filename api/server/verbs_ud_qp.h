#pragma once
// A UD QP of a verbs connection: a fabric UD QP on the connection's HCA
// whose endpoint fills the client's receive ring; its sends are taken from
// the client's send ring.
#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "api/client/shared_memory.h"
#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/verbs_cq.h"
#include "api/server/verbs_service.h"
#include "fabric/model/hca.h"
#include "sim/simulator.h"

namespace ibfab::api {

class VerbsService::Qp final : public fabric::UdEndpoint {
 public:
  Qp(VerbsContext& ctx, sim::Simulator& sim, uint32_t qpn, SharedMemory mem, const CreateQp& req, Cq* scq, Cq* rcq)
      : ctx_(ctx), qpn_(qpn), mem_(std::move(mem)), rings_(mem_.as<rings::QpRings>()), req_(req), scq_(scq), rcq_(rcq),
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

  // The QP's multicast attachments as uverbs keeps them: an (MGID, MLID)
  // attached again is 0 and reaches the HCA once; a detach of one not
  // attached is EINVAL. 0 or a positive errno value.
  int attach(fabric::Hca& hca, const std::array<uint8_t, 16>& mgid, uint16_t mlid);
  int detach(fabric::Hca& hca, const std::array<uint8_t, 16>& mgid, uint16_t mlid);
  // A user's ibv_destroy_qp is refused (EBUSY) while any remains.
  bool attached() const { return !mcast_.empty(); }

 private:
  // A message that found no receive posted, waiting (up to the service's
  // receive grace) for one; at most kHeldPerReceive times the receive
  // queue's depth wait.
  static constexpr std::size_t kHeldPerReceive = 4;
  struct Held {
    rings::Cqe cqe;
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
  bool place(const rings::Cqe& c, const uint8_t* grh, std::span<const uint8_t> payload, bool solicited);
  bool place_held();
  void flush();
  // Writes a send completion once its message has left the port (`at`,
  // simulated time), and never before an earlier send's: completions of
  // one send queue keep posting order, errors and flushes included.
  void complete_send(const rings::Cqe& c, sim::Time at);
  void complete_due();
  rings::Cqe completion() const {
    rings::Cqe c;
    c.qp_handle = req_.user_handle;
    c.qp_num = qpn_;
    return c;
  }

  VerbsContext& ctx_;
  uint32_t qpn_;
  SharedMemory mem_;
  rings::QpRings* rings_;
  CreateQp req_;
  Cq* scq_;
  Cq* rcq_;
  uint8_t state_ = IBV_QPS_RESET;
  uint32_t sq_tail_ = 0;
  uint32_t rq_taken_ = 0;
  std::deque<Held> held_;
  std::vector<std::pair<std::array<uint8_t, 16>, uint16_t>> mcast_;  // (MGID, MLID) attached
  struct Completing {
    sim::Time at;
    rings::Cqe cqe;
  };
  std::deque<Completing> completing_;  // send completions not yet due, times non-decreasing
  sim::EventHandle completing_timer_;  // pending while completing_ is not empty
  sim::Simulator& sim_;
};

}  // namespace ibfab::api
