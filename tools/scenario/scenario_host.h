#pragma once
// A host's part in a scenario, as an application on it would act: an SA
// client on QP1 (MCMemberRecord Set to join, Delete to leave, sent to the
// port's MasterSMLID with a 3-try timeout as the kernel does), and one UD
// QP that is attached to every group joined as a receiving member (Full or
// NonMember: send-only members are not attached, as librdmacm does) and
// sends UD multicast with a GRH.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "fabric/model/hca.h"
#include "fabric/wire/gid.h"
#include "sim/event_handle.h"
#include "sim/time.h"
#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

struct JoinResult {
  uint16_t status = 0;  // SA status; kTimedOut when no answer came
  uint16_t mlid = 0;
  wire::Gid mgid{};
  uint8_t join_state = 0;  // as the SA returned it
  sim::Time sent, answered;
  static constexpr uint16_t kTimedOut = 0xFFFF;
};

class ScenarioHost : public fabric::MadAgent, public fabric::UdEndpoint {
 public:
  explicit ScenarioHost(fabric::Hca& hca, uint8_t port = 1);
  ~ScenarioHost() override;
  ScenarioHost(const ScenarioHost&) = delete;
  ScenarioHost& operator=(const ScenarioHost&) = delete;

  using Done = std::function<void(const JoinResult&)>;
  void join(const McastSpec& spec, Done done);
  void leave(const McastSpec& spec, Done done);
  // Sends spec.count packets of spec.size bytes, 1 us apart, to a group this
  // host has joined (any JoinState). False if it has not.
  bool send(const McastSpec& spec);

  // Subscribes (InformInfo Set) to generic traps `trap` from any producer;
  // Reports that arrive are answered (ReportResp) and counted.
  void subscribe(uint16_t trap, Done done);
  uint64_t reports(uint16_t trap) const {
    auto it = reports_.find(trap);
    return it == reports_.end() ? 0 : it->second;
  }

  uint64_t received() const { return received_; }
  uint64_t sent() const { return sent_; }
  const std::string& name() const { return hca_.name(); }

  void on_mad(fabric::Port& port, const fabric::MadAddress& from, std::span<const uint8_t> mad) override;
  bool on_receive(const fabric::UdMessage& msg) override;

 private:
  struct Group {
    uint16_t mlid = 0;
    uint32_t qkey = 0;
    uint8_t state = 0;  // accumulated JoinState this host holds
    bool attached = false;
  };
  struct Pending {
    std::array<uint8_t, 256> mad;
    unsigned tries = 0;
    sim::Time sent;
    sim::EventHandle timeout;
    Done done;
  };
  void request(uint8_t method, const McastSpec& spec, uint64_t mask, Done done);
  void send_request(std::array<uint8_t, 256> mad, uint32_t tid, Done done);
  void transmit(uint32_t tid);
  void answered(const std::array<uint8_t, 256>& request, const JoinResult& r);

  fabric::Hca& hca_;
  uint8_t port_;
  uint32_t agent_ = 0;
  uint32_t qpn_ = 0;
  uint32_t next_tid_ = 1;
  std::unordered_map<uint32_t, Pending> pending_;
  std::map<wire::Gid, Group> groups_;
  std::map<uint16_t, uint64_t> reports_;  // by trap number
  uint64_t received_ = 0, sent_ = 0;
  std::vector<uint8_t> payload_;  // what send() puts in every packet
};

}  // namespace ibfab::scenario
