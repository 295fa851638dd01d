#pragma once
// Directed-route discovery, as ibnetdiscover and OpenSM's first sweep do
// it, through SMPs from one HCA port and nothing else:
//   - NodeInfo (and NodeDescription) of every node reached;
//   - PortInfo of every port of every switch, to find the LinkUp ones;
//   - NodeInfo one hop further out of each LinkUp port.
// A node is known by its GUID; each link is recorded once. Requests go
// through an SmpSender (window, timeouts, retries); order is breadth-first
// and deterministic.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fabric/mad/node_info.h"
#include "fabric/mad/port_info.h"
#include "sm/smp_sender.h"
#include "sim/time.h"

namespace ibfab::sm {

struct DiscoveredNode {
  uint64_t guid = 0;
  uint8_t type = 0;  // NodeInfo NodeType: 1 CA, 2 switch
  uint8_t num_ports = 0;
  uint64_t system_guid = 0;
  uint16_t device_id = 0;
  uint32_t vendor_id = 0;
  uint16_t partition_cap = 0;
  std::string description;
  std::vector<uint8_t> path;  // directed route from the probing port
  // Port GUIDs by port number, as far as discovered ([0] of a switch is
  // its node GUID; a CA port never reached stays 0).
  std::vector<uint64_t> port_guids;
  // The port through which `path` enters this node.
  uint8_t entry_port = 0;
  // NodeInfo as first read (PortGUID and LocalPortNum of the entry port).
  mad::NodeInfo info{};
  // A switch's PortInfo by port number, as read (every port but the entry
  // port; port_info_read says which).
  std::vector<mad::PortInfo> port_info;
  std::vector<bool> port_info_read;
  bool is_switch() const { return type == 2; }
};

struct DiscoveredLink {
  uint64_t a_guid;
  uint8_t a_port;
  uint64_t b_guid;
  uint8_t b_port;
};

struct DiscoveryResult {
  std::vector<DiscoveredNode> nodes;  // in discovery order; [0] is the prober
  std::vector<DiscoveredLink> links;
  uint64_t smps_sent = 0;
  uint64_t retries = 0;
  uint64_t unanswered = 0;
  sim::Time started, finished;
  std::size_t switches() const;
};

class Discovery {
 public:
  explicit Discovery(SmpSender& sender) : sender_(sender) {}
  Discovery(const Discovery&) = delete;
  Discovery& operator=(const Discovery&) = delete;

  // Starts a sweep; `done` runs (in simulated time) when it is complete.
  void start(std::function<void(const DiscoveryResult&)> done);
  bool running() const { return running_; }
  const DiscoveryResult& result() const { return result_; }

 private:
  void node_info(std::span<const uint8_t> path, uint32_t parent, uint8_t parent_port);
  void on_node_info(std::span<const uint8_t> path, uint32_t parent, uint8_t parent_port,
                    std::span<const uint8_t> data);
  void add_link(uint64_t a, uint8_t ap, uint64_t b, uint8_t bp);

  SmpSender& sender_;
  bool running_ = false;
  uint64_t sent_at_start_ = 0, retries_at_start_ = 0, unanswered_at_start_ = 0;
  std::unordered_map<uint64_t, uint32_t> by_guid_;
  std::set<std::pair<uint64_t, uint8_t>> link_seen_;  // the lower (guid, port) end of each link
  DiscoveryResult result_;
  std::function<void(const DiscoveryResult&)> done_;
};

}  // namespace ibfab::sm
