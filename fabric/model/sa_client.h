#pragma once
// An SA client on one HCA port, as the kernel's ib_sa is for rdma_cm and
// IPoIB (and for a scenario's hosts): a request goes to the port's MasterSMLID on QP1 (with the
// P_Key index of the default partition, as ib_sa sends), is resent after
// each timeout up to `retries` times, and its answer (or the failure)
// comes back to the callback in simulated time. Statuses follow the
// kernel's sa_query.c: 0, -EINVAL when the SA answered with a non-zero
// status (the MAD is still handed over), -ETIMEDOUT when nothing came,
// -ENETUNREACH when the port has no SM to ask.
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

class SaClient final : public MadAgent {
 public:
  using Done = std::function<void(int status, std::span<const uint8_t> mad)>;

  SaClient(Hca& hca, uint8_t port);
  ~SaClient() override;
  SaClient(const SaClient&) = delete;
  SaClient& operator=(const SaClient&) = delete;

  // Sends method/attribute with `record` (packed, at most the SA data
  // size) under `mask`. Returns a ticket for cancel(); `done` is called
  // once, unless cancelled first.
  uint64_t send(uint8_t method, uint16_t attribute, uint64_t mask, std::span<const uint8_t> record,
                sim::Time timeout, unsigned retries, Done done);
  // Forgets a request: its callback is never called.
  void cancel(uint64_t ticket);

  void on_mad(Port& port, const MadAddress& from, std::span<const uint8_t> mad) override;

 private:
  struct Pending {
    std::array<uint8_t, 256> mad{};
    sim::Time timeout;
    unsigned retries_left = 0;
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
  std::unordered_map<uint32_t, Pending> pending_;  // by TID bits 31:0
};

}  // namespace ibfab::fabric
