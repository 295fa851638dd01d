#pragma once
// A host's part in a scenario, as an application on it would act: an SA
// client on QP1 (fabric::SaClient: MCMemberRecord Set to join, Delete to
// leave, sent to the port's MasterSMLID, 3000 ms spent as the kernel's
// ib_sa spends it: fabric::SaRetry::kernel), and one UD
// QP that is attached to every group joined as a receiving member (Full or
// NonMember: send-only members are not attached, as librdmacm does) and
// sends UD multicast with a GRH. The QP takes the Q_Key and P_Key index
// (the entry of the group's partition in the port's table) of the group it
// last joined. Everything the host observes (each SA answer with its
// outcome and records, each Report, each message received with its
// payload) is folded into the simulator's run digest.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "fabric/model/hca.h"
#include "fabric/model/sa_client.h"
#include "fabric/wire/gid.h"
#include "sim/time.h"
#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

struct JoinResult {
  uint16_t status = 0;  // SA status; kTimedOut when no answer came, kNoSm when the port knows no SM
  uint16_t mlid = 0;
  wire::Gid mgid{};
  uint8_t join_state = 0;  // as the SA returned it
  uint16_t p_key = 0;      // the group's, as the SA returned it
  sim::Time sent, answered;
  static constexpr uint16_t kTimedOut = 0xFFFF;
  static constexpr uint16_t kNoSm = 0xFFFE;
  bool answered_by_sa() const { return status != kTimedOut && status != kNoSm; }
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
  // Reports that arrive (at this host's own agent, which takes the SA's
  // Reports) are answered (ReportResp) and counted.
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
  void request(uint8_t method, const McastSpec& spec, uint64_t mask, Done done);
  // Folds what the application saw into the run's digest (the fingerprint),
  // if one is attached: a kind, three fields, and the bytes it received.
  void observe(uint32_t kind, uint64_t a, uint64_t b, uint64_t c, std::span<const uint8_t> bytes) const;
  void answered(uint8_t method, const JoinResult& r, uint8_t join_state, uint32_t qkey);

  fabric::Hca& hca_;
  uint8_t port_;
  fabric::SaClient sa_;
  uint32_t agent_ = 0;  // takes the SA's Reports
  uint32_t qpn_ = 0;
  std::map<wire::Gid, Group> groups_;
  std::map<uint16_t, uint64_t> reports_;  // by trap number
  uint64_t received_ = 0, sent_ = 0;
  std::vector<uint8_t> payload_;  // what send() puts in every packet
};

}  // namespace ibfab::scenario
