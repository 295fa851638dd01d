#pragma once
// The SM's SMP transport: directed-route Get/Set requests from one HCA
// port, at most `window` outstanding, each resent after `timeout` up to
// `retries` times, with a callback for the answer. OpenSM keeps a similar
// window of SMPs "on the wire"; the default here is larger because the
// simulated fabric has no real MAD queues to overflow.
//
// Order: requests leave in the order they were queued; a generated batch
// (generate()) keeps its place in that order as if all its requests had
// been queued at once. A request that timed out is resent before anything
// else. Callbacks run in the order answers arrive; a callback may queue
// more requests.
//
// Timeouts: a request is given up on (and resent, or reported unanswered)
// `timeout` after it was sent. One simulator event at a time watches the
// oldest outstanding request, so an answered request leaves nothing behind
// in the simulator's queue.
//
// Cost: nothing is allocated per request once the queue has grown, provided
// its callback's captures fit std::function's inline buffer (16 trivially
// copyable bytes, e.g. `this` and an index); a generated batch stores nothing
// per request until the request leaves.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fabric/mad/dr_smp.h"
#include "fabric/model/hca.h"
#include "sm/dr_route.h"
#include "sm/ring_queue.h"
#include "sim/event_handle.h"
#include "sim/time.h"

namespace ibfab::sm {

// The attribute data of an answered SMP (as SmpSender callbacks get it).
inline std::span<const uint8_t> smp_data(std::span<const uint8_t> smp) {
  return smp.subspan(mad::dr_smp::kDataOffset, mad::dr_smp::kDataSize);
}

class SmpSender : public fabric::MadAgent {
 public:
  struct Options {
    unsigned window = 32;
    sim::Time timeout = sim::Time::ms(200);
    unsigned retries = 3;
  };
  // `smp` is the answer (256 bytes), or empty when every try went
  // unanswered. `status` is the MAD status without the D bit.
  using Callback = std::function<void(std::span<const uint8_t> smp, uint16_t status)>;

  // One directed-route request.
  struct Request {
    uint8_t method = 0;  // mad::dr_smp::kMethodGet or kMethodSet
    uint16_t attr = 0;
    uint32_t modifier = 0;
    DrRoute path;
    uint8_t data[64] = {};  // a Set's attribute data
    Callback cb;            // may be empty
  };
  // Fills request i of a generated batch.
  using Generator = std::function<void(std::size_t i, Request& r)>;

  // Registers a directed-route agent on hca:port (throws std::runtime_error
  // if the port has one already).
  SmpSender(fabric::Hca& hca, uint8_t port, Options options);
  ~SmpSender() override;
  SmpSender(const SmpSender&) = delete;
  SmpSender& operator=(const SmpSender&) = delete;

  // `path` longer than mad::dr_smp::kMaxHops is cut there; `data` beyond
  // 64 bytes is ignored.
  void get(std::span<const uint8_t> path, uint16_t attr, uint32_t modifier, Callback cb);
  void set(std::span<const uint8_t> path, uint16_t attr, uint32_t modifier, std::span<const uint8_t> data,
           Callback cb);
  // Queues `count` requests that `make` fills in one at a time, in order
  // (i = 0 .. count - 1), each when its turn to leave comes. `make` is given
  // a fresh Request; it must not call the sender.
  void generate(std::size_t count, Generator make);
  // Runs `fn` once everything queued so far (and whatever its callbacks
  // queue) has been answered or given up.
  void when_idle(std::function<void()> fn);

  bool idle() const { return queue_.empty() && in_flight_ == 0; }
  uint64_t sent() const { return sent_; }
  uint64_t retries() const { return retries_; }
  uint64_t unanswered() const { return unanswered_; }
  fabric::Hca& hca() const { return hca_; }
  uint8_t port() const { return port_; }

  void on_mad(fabric::Port& port, const fabric::MadAddress& from, std::span<const uint8_t> mad) override;

 private:
  struct Pending {
    Request request;
    unsigned tries = 0;  // times sent so far
  };
  // One queue entry: a request, or (make set) the rest of a generated batch.
  struct Queued {
    Pending pending;
    Generator make;
    std::size_t next = 0, count = 0;
  };
  struct Slot {
    Pending pending;
    sim::Time deadline;
  };
  static constexpr uint32_t kFree = 0;  // slot_tid_ of an unused slot

  void enqueue(uint8_t method, std::span<const uint8_t> path, uint16_t attr, uint32_t modifier,
               std::span<const uint8_t> data, Callback cb);
  void pump();
  void send(Pending p);
  // The outstanding request sent first, or -1.
  int oldest() const;
  void arm_timer(sim::Time deadline);
  void on_timer();
  void timed_out(unsigned slot);

  fabric::Hca& hca_;
  uint8_t port_;
  Options options_;
  uint32_t agent_ = 0;
  uint32_t next_tid_ = 1;
  RingQueue<Queued> queue_;
  // Outstanding requests: `window` slots, slot_tid_[i] the TID in slot i
  // (kFree if none); the TIDs apart so that a lookup scans one cache line.
  std::vector<Slot> slots_;
  std::vector<uint32_t> slot_tid_;
  unsigned in_flight_ = 0;
  sim::EventHandle timer_;    // due at the oldest outstanding request's deadline
  bool timer_armed_ = false;  // timer_ is pending, or running
  std::vector<std::function<void()>> idle_waiters_;
  uint64_t sent_ = 0, retries_ = 0, unanswered_ = 0;
};

}  // namespace ibfab::sm
