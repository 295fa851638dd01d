#pragma once
// An SA client on one HCA port, as the kernel's ib_sa is for rdma_cm and
// IPoIB (and for a scenario's hosts): a request goes to the port's
// MasterSMLID on QP1 (with the P_Key index of the default partition, as
// ib_sa sends), is resent after each wait of its SaRetry schedule,
// and its answer (or the failure) comes back to the callback in simulated
// time. Statuses follow the kernel's sa_query.c: 0, -EINVAL when the SA
// answered with a non-zero status (the MAD is still handed over),
// -ETIMEDOUT when nothing came, -ENETUNREACH when the port has no SM to ask.
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>

#include "fabric/model/hca.h"
#include "fabric/model/mad_agent.h"
#include "sim/event_handle.h"
#include "sim/simulator.h"

namespace ibfab::fabric {

// When a request is sent again. The kernel's sa_query.c (send_mad, since
// Linux 5.15, commit 5f5a650999d5 "Retry SA queries") spends a caller's
// total timeout T as one send and 10 retries, each waiting T/10 (a T under
// 10 ms: T retries of 1 ms); ib_mad retries at that fixed interval, with
// no backoff. Its wait is armed in whole jiffies once the send has
// completed, so a real retry comes up to a tick later than T/10, a spread
// that keeps retries of different requests out of step with each other
// and with anything periodic on the fabric. Here each wait is per_try plus
// a draw uniform in [0, spread): a pure function of the simulator's seed,
// the port's GUID, the request's TID and the try (same seed, same run;
// never wall time). kernel(T) uses one tick of Debian's HZ=250 (4 ms).
struct SaRetry {
  static constexpr sim::Time kTick = sim::Time::ms(4);
  sim::Time per_try = sim::Time::ms(300);
  unsigned retries = 10;
  sim::Time spread = kTick;
  // The kernel's schedule for a total timeout (multicast.c joins and
  // leaves: 3000 ms; rdma_resolve_route: the caller's timeout_ms).
  static SaRetry kernel(sim::Time total);
  // A fixed schedule with no spread: a umad client's own timeout and
  // retries, as libibumad's umad_send takes them.
  static SaRetry fixed(sim::Time per_try, unsigned retries) { return {per_try, retries, sim::Time::zero()}; }
  // The wait before try `attempt` (0 = the first send) of request `tid`
  // from port `port_guid` under `seed`.
  sim::Time wait(uint64_t seed, uint64_t port_guid, uint32_t tid, unsigned attempt) const;
};

class SaClient final : public MadAgent {
 public:
  using Done = std::function<void(int status, std::span<const uint8_t> mad)>;

  SaClient(Hca& hca, uint8_t port);
  ~SaClient() override;
  SaClient(const SaClient&) = delete;
  SaClient& operator=(const SaClient&) = delete;

  // Sends method/attribute with `record` (packed, at most the SA data
  // size) under `mask`, retried as `retry` says. Returns a ticket for
  // cancel(); `done` is called once, unless cancelled first.
  uint64_t send(uint8_t method, uint16_t attribute, uint64_t mask, std::span<const uint8_t> record, SaRetry retry,
                Done done);
  // Sends made so far, retries included (for tests and reports).
  uint64_t transmissions() const { return transmissions_; }
  // Forgets a request: its callback is never called.
  void cancel(uint64_t ticket);

  void on_mad(Port& port, const MadAddress& from, std::span<const uint8_t> mad) override;

 private:
  struct Pending {
    std::array<uint8_t, 256> mad{};
    SaRetry retry;
    unsigned attempt = 0;  // tries sent so far
    sim::EventHandle timer;
    Done done;
  };
  void transmit(uint32_t tid);
  void expire(uint32_t tid);
  void finish(uint32_t tid, int status, std::span<const uint8_t> mad);

  Hca& hca_;
  uint8_t port_;
  uint32_t agent_ = 0;
  uint32_t next_tid_ = 1;
  uint64_t transmissions_ = 0;
  std::unordered_map<uint32_t, Pending> pending_;  // by TID bits 31:0
};

}  // namespace ibfab::fabric
