#pragma once
// The Subnet Manager's bring-up (a heavy sweep), through SMPs from its HCA
// port only, in OpenSM's order:
//   1. discovery (directed route, sm/discovery.h);
//   1b. partitions: each end port's P_KeyTable blocks that differ from the
//      table the configuration gives it are Set (sm/partitions/
//      pkey_assignment.h; these SMPs count in the LID phase);
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
//
// SM election and sweeps (IBTA 14.4, as OpenSM does them), all by SMPs:
//   - the SM answers SMInfo Get/Set and Traps on its port (sm_info_agent.h)
//     with its port GUID, SM_Key 0, ActCount (SMPs sent), priority, state;
//   - between discovery and LID assignment every end port's PortInfo is
//     read; each CA port whose CapabilityMask has IsSM is asked for its
//     SMInfo. A Discovering SM that finds a Master, or a Discovering SM
//     that outranks it (mad::sm_outranks), goes Standby and configures
//     nothing; otherwise it configures the subnet as Master;
//   - LIDs already in PortInfo are kept when an SM becomes master (so hosts
//     keep their LIDs across a failover); ClientReregister is set on every
//     end port by the first sweep after an SM becomes master;
//   - a Master that finds a Standby outranking it hands over after the
//     sweep (SubnSet(SMInfo) HANDOVER; the new master answers ACKNOWLEDGE,
//     and the old one goes Standby);
//   - once start()ed, a Master light-sweeps every sweep_interval: SwitchInfo
//     of every switch (PortStateChange is read, then cleared by writing 1)
//     and SMInfo of the other SMs it knows; a change, a switch that does not
//     answer, or a Trap 128 since the last sweep makes a heavy sweep;
//   - a Standby polls its master's SMInfo every poll_interval; after
//     poll_retries polls in a row fail (no answer, an error, or a state
//     other than Master) it goes Discovering and sweeps, taking over.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/mad/port_info.h"
#include "fabric/mad/sm_info.h"
#include "sim/event_handle.h"
#include "sim/progress.h"
#include "sm/discovery.h"
#include "sm/mcast/mcast_manager.h"
#include "sm/partitions/partition_config.h"
#include "sm/sa/mcast_groups.h"
#include "sm/sa/sa_agent.h"
#include "sm/routing/routing_engine.h"
#include "sm/sm_info_agent.h"
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
  // MFT changes are programmed in batches this far apart (McastManager).
  sim::Time mcast_batch = sim::Time::zero();
  McastOptions groups;
  uint8_t lmc = 0;
  uint8_t subnet_timeout = 18;  // OpenSM's default (4.096 us x 2^18 ~ 1 s)
  // Partitions (OpenSM's partitions.conf, sm/partitions/): the P_Key tables
  // the SM programs on every end port and the groups the SA pre-creates.
  // Empty (no file): OpenSM's default, every port a full member of 0x7FFF
  // (0xFFFF at index 0) and its IPoIB broadcast group.
  std::optional<partitions::PartitionConfig> partition_config;
  SmpSender::Options smp;
  // Election and sweeping (OpenSM's defaults).
  uint8_t priority = 0;                             // 0..15
  sim::Time sweep_interval = sim::Time::s(10);      // light sweeps as master
  sim::Time poll_interval = sim::Time::s(10);       // standby polls of the master
  unsigned poll_retries = 4;                        // failed polls before taking over
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
  // Election: the SM's state when the sweep ended (mad::sm_state), the other
  // SMs it found (state not NotActive), and when it last became master.
  uint8_t state = 0;
  bool master = false;
  std::size_t remote_sms = 0;
  uint64_t master_guid = 0;  // port GUID of the master as this SM sees it
  sim::Time master_since;    // valid when master
  // Totals since construction: heavy sweeps completed as master, light
  // sweeps, standby polls of the master and those that failed.
  uint64_t heavy_sweeps = 0, light_sweeps = 0, polls = 0, failed_polls = 0;
};

class SubnetManager {
 public:
  // Takes hca:port's directed-route agent. Throws std::runtime_error for an
  // unknown routing engine or a port that already has an SM.
  SubnetManager(fabric::Hca& hca, uint8_t port, SmOptions options);
  ~SubnetManager();
  SubnetManager(const SubnetManager&) = delete;
  SubnetManager& operator=(const SubnetManager&) = delete;

  // Starts the SM's state machine: Discovering, a heavy sweep with the
  // election, then light sweeps as Master or polls as Standby, forever
  // (until stop()). Run the simulation with run_until().
  void start();
  // Stops the SM, as if its process died: it no longer answers SMInfo or
  // Traps (its port's IsSM is cleared), the SA stops answering, no more
  // sweeps or polls. A sweep under way stops at its next phase.
  void stop();
  // Starts a heavy sweep now (with the election), without arming the
  // periodic timers unless start() did.
  void sweep();
  // Starts a light sweep now (a Master only).
  void light_sweep();
  uint8_t state() const { return state_; }
  bool master() const { return state_ == mad::sm_state::kMaster; }
  mad::SmInfo sm_info() const;
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
  // Where the sweep's phases are reported (the simulator's sim/progress.h).
  sim::Progress& progress();

  struct EndPort {
    uint32_t node;  // index into the discovery result
    uint8_t port;
    uint64_t guid;
  };
  struct RemoteSm {
    mad::SmInfo info;
    std::vector<uint8_t> path;  // directed route to its port
  };
  void discovered(const DiscoveryResult& r);
  void read_ports();
  void elect();
  void decide();
  void program_pkeys();
  void assign_lids();
  void program_routes();
  void activate(uint8_t target_state);
  void finish();
  void fail(const std::string& why);
  uint64_t phase_smps();
  // Keep an SMA's answer in the Subnet being built (node: discovery index).
  void keep_port_info(uint32_t node, uint8_t port, const mad::PortInfo& pi);
  void keep_switch_info(uint32_t routing_index, const mad::SwitchInfo& si);
  // State changes and timers.
  void become_master();
  void become_standby(const RemoteSm& master);
  void request_heavy_sweep();
  void arm_timer(sim::Time delay);
  void on_timer();
  void poll_master();
  void poll_failed();
  void send_sm_info_set(const std::vector<uint8_t>& path, uint32_t modifier);
  void hand_over_if_outranked();
  const RemoteSm* remote_by_guid(uint64_t guid) const;
  uint16_t on_sm_info_set(uint32_t modifier, const mad::SmInfo& from);
  void on_trap(const mad::Notice& n);
  // False once the SM stopped or is no longer master: a sweep's remaining
  // phases then do nothing.
  bool still_master() const { return !stopped_ && state_ == mad::sm_state::kMaster; }
  void stamp_report();

  fabric::Hca& hca_;
  uint8_t port_;
  SmOptions options_;
  SmpSender sender_;
  Discovery discovery_;
  std::unique_ptr<RoutingEngine> engine_;
  std::unordered_map<uint64_t, uint16_t> lids_;  // port GUID -> base LID, kept across sweeps
  uint16_t next_lid_ = 1;
  uint16_t own_lid_ = 0;
  bool reregister_ = true;  // set ClientReregister on the next LID phase
  bool sweeping_ = false, up_ = false;
  // Election state.
  uint8_t state_ = mad::sm_state::kNotActive;
  bool running_ = false;             // start()ed: timers armed
  bool stopped_ = false;             // stop() was called
  bool light_sweeping_ = false;
  bool resweep_ = false;             // a heavy sweep was asked for during one
  bool handing_over_ = false;        // HANDOVER sent, waiting for ACKNOWLEDGE
  std::vector<mad::PortInfo> read_pi_;  // per end port, read before the election
  struct PortAt {
    DrRoute route;  // to the port's node
    uint8_t port;
    uint32_t node;  // index into the discovery result
  };
  struct ArmedPort {
    PortAt at;
    mad::PortInfo info;  // as the port answered: Armed
  };
  std::vector<PortAt> visits_;    // the ports the Armed pass reads
  std::vector<ArmedPort> armed_;  // filled by the Armed pass, used by the Active pass
  std::vector<bool> read_ok_;
  // The generated batches' requests: (end port, P_Key block) to read, and
  // the end ports whose LIDs are set.
  std::vector<std::pair<uint32_t, uint32_t>> pkey_reads_;
  std::vector<uint32_t> lid_sets_;
  std::vector<RemoteSm> remotes_;    // other SMs found by the last heavy sweep
  RemoteSm polled_;                  // the master a Standby polls
  unsigned poll_failures_ = 0;
  sim::EventHandle timer_;
  sim::Time master_since_;
  uint64_t heavy_sweeps_ = 0, light_sweeps_ = 0, polls_ = 0, failed_polls_ = 0;
  bool light_change_ = false;
  std::unique_ptr<SmInfoAgent> sm_info_agent_;
  std::vector<EndPort> end_ports_;
  std::unordered_map<uint64_t, uint32_t> node_by_guid_;
  std::vector<uint32_t> switch_nodes_;  // routing switch index -> discovery index
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
