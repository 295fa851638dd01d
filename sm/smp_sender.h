#pragma once
// The SM's SMP transport: directed-route Get/Set requests from one HCA
// port, at most `window` outstanding, each resent after `timeout` up to
// `retries` times, with a callback for the answer. OpenSM keeps a similar
// window of SMPs "on the wire"; the default here is larger because the
// simulated fabric has no real MAD queues to overflow.
//
// Order: requests leave in the order they were queued; callbacks run in
// the order answers arrive. A callback may queue more requests.
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "fabric/model/hca.h"
#include "sim/event_handle.h"
#include "sim/time.h"

namespace ibfab::sm {

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

  // Registers a directed-route agent on hca:port (throws std::runtime_error
  // if the port has one already).
  SmpSender(fabric::Hca& hca, uint8_t port, Options options);
  ~SmpSender() override;
  SmpSender(const SmpSender&) = delete;
  SmpSender& operator=(const SmpSender&) = delete;

  void get(std::span<const uint8_t> path, uint16_t attr, uint32_t modifier, Callback cb);
  void set(std::span<const uint8_t> path, uint16_t attr, uint32_t modifier, std::span<const uint8_t> data,
           Callback cb);
  // Runs `fn` once everything queued so far (and whatever its callbacks
  // queue) has been answered or given up.
  void when_idle(std::function<void()> fn);

  bool idle() const { return queue_.empty() && in_flight_.empty(); }
  uint64_t sent() const { return sent_; }
  uint64_t retries() const { return retries_; }
  uint64_t unanswered() const { return unanswered_; }
  fabric::Hca& hca() const { return hca_; }
  uint8_t port() const { return port_; }

  void on_mad(fabric::Port& port, const fabric::MadAddress& from, std::span<const uint8_t> mad) override;

 private:
  struct Request {
    uint8_t method;
    uint8_t hops;
    uint16_t attr;
    uint32_t modifier;
    uint8_t path[64];
    uint8_t data[64];
    unsigned tries;
    Callback cb;
  };
  void enqueue(uint8_t method, std::span<const uint8_t> path, uint16_t attr, uint32_t modifier,
               std::span<const uint8_t> data, Callback cb);
  void pump();
  void send(Request r);
  void timed_out(uint32_t tid);

  fabric::Hca& hca_;
  uint8_t port_;
  Options options_;
  uint32_t agent_ = 0;
  uint32_t next_tid_ = 1;
  std::deque<Request> queue_;
  struct InFlight {
    Request request;
    sim::EventHandle timeout;
  };
  std::unordered_map<uint32_t, InFlight> in_flight_;
  std::vector<std::function<void()>> idle_waiters_;
  uint64_t sent_ = 0, retries_ = 0, unanswered_ = 0;
};

}  // namespace ibfab::sm
