#pragma once
// The Subnet Manager's bring-up (a heavy sweep), through SMPs from its HCA
// port only, in OpenSM's order:
//   1. discovery (directed route, sm/discovery.h);
//   2. LIDs: every end port (CA ports, switch port 0) gets a LID that stays
//      the same across sweeps (by port GUID), with MasterSMLID, LMC,
//      SubnetTimeOut and, on the SM's first sweep as master,
//      ClientReregister; PortInfo is read, changed and written back;
//   3. routing: the named engine computes LFTs; each switch gets
//      SwitchInfo.LinearFDBTop and every LFT block up to it;
//   4. activation: every linked port in Init is set Armed, then every Armed
//      port Active (a Set to the current state is an error, so ports
//      already Active are left alone).
// When the last port is Active the subnet is up: the SA starts answering on
// the SM's port (QP1), the multicast manager re-routes every MLID, and
// `on_subnet_up` runs.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sm/discovery.h"
#include "sm/mcast/mcast_manager.h"
#include "sm/sa/mcast_groups.h"
#include "sm/sa/sa_agent.h"
#include "sm/routing/routing_engine.h"
#include "sm/smp_sender.h"
#include "sm/subnet.h"
#include "sim/time.h"

namespace ibfab::sm {

struct SmOptions {
  std::string routing = "minhop";
  // Multicast policies (sm/mcast/mcast_policies.h), OpenSM's by default.
  std::string mcast_root = "min-max-hop";
  std::string mcast_tree = "shortest-path";
  std::string mlid_allocator = "lowest-free";
  std::string admission = "unlimited";
  McastOptions groups;
  uint8_t lmc = 0;
  uint8_t subnet_timeout = 18;  // OpenSM's default (4.096 us x 2^18 ~ 1 s)
  SmpSender::Options smp;
};

// Figures of one sweep, in simulated time and SMP counts.
struct SweepReport {
  bool ok = false;
  std::string error;
  sim::Time started, discovered, lids_set, routed, up;
  uint64_t smps = 0, retries = 0, unanswered = 0;
  uint64_t smps_discovery = 0, smps_lids = 0, smps_routing = 0, smps_activation = 0;
  std::size_t nodes = 0, switches = 0, end_ports = 0, ports_activated = 0;
  uint16_t max_lid = 0;
  double routing_wall_seconds = 0;
};

class SubnetManager {
 public:
  // Takes hca:port's directed-route agent. Throws std::runtime_error for an
  // unknown routing engine or a port that already has an SM.
  SubnetManager(fabric::Hca& hca, uint8_t port, SmOptions options);
  ~SubnetManager();
  SubnetManager(const SubnetManager&) = delete;
  SubnetManager& operator=(const SubnetManager&) = delete;

  // Starts a heavy sweep now.
  void sweep();
  bool sweeping() const { return sweeping_; }
  bool subnet_up() const { return up_; }
  const SweepReport& last_sweep() const { return report_; }
  std::function<void(const SweepReport&)> on_subnet_up;

  uint16_t lid_of(uint64_t port_guid) const;
  uint16_t own_lid() const { return own_lid_; }
  const DiscoveryResult& discovered_nodes() const { return discovery_.result(); }
  // The subnet as of the last completed sweep (valid once subnet_up()).
  const Subnet& subnet() const { return subnet_; }
  SmpSender& smp() { return sender_; }
  // The SA and the multicast manager: null until the first subnet up.
  SaAgent* sa() { return sa_.get(); }
  McastGroups* groups() { return groups_.get(); }
  McastManager* mcast() { return mcast_.get(); }

 private:
  struct EndPort {
    uint32_t node;  // index into the discovery result
    uint8_t port;
    uint64_t guid;
  };
  void discovered(const DiscoveryResult& r);
  void assign_lids();
  void program_routes();
  void activate(uint8_t target_state);
  void finish();
  void fail(const std::string& why);
  uint64_t phase_smps();

  fabric::Hca& hca_;
  uint8_t port_;
  SmOptions options_;
  SmpSender sender_;
  Discovery discovery_;
  std::unique_ptr<RoutingEngine> engine_;
  std::unordered_map<uint64_t, uint16_t> lids_;  // port GUID -> base LID, kept across sweeps
  uint16_t next_lid_ = 1;
  uint16_t own_lid_ = 0;
  bool first_sweep_ = true;
  bool sweeping_ = false, up_ = false;
  std::vector<EndPort> end_ports_;
  std::unordered_map<uint64_t, uint32_t> node_by_guid_;
  Subnet subnet_;        // published at the end of a sweep
  Subnet building_;      // filled during a sweep
  SweepReport report_;
  uint64_t phase_start_smps_ = 0;
  // Destroyed in reverse: the SA uses the groups, the groups the manager.
  std::unique_ptr<McastManager> mcast_;
  std::unique_ptr<McastGroups> groups_;
  std::unique_ptr<SaAgent> sa_;
};

}  // namespace ibfab::sm
