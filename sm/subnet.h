#pragma once
// What the SM knows about the subnet after a sweep: its end ports (CA
// ports and switch port 0s) with the LIDs it assigned and the capabilities
// it read; every node with its NodeInfo, NodeDescription, each port's
// PortInfo as last answered and the link from it, and a switch's SwitchInfo;
// the SMs it knows; the switch graph it routed and the routes (the LFTs it
// programmed), and the directed routes to every switch. The SA and the
// multicast manager read it; only the SM writes it (at the end of each
// heavy sweep). Everything here came from SMPs: it is the SM's view, which
// may lag behind the fabric.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/mad/node_info.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/sm_info.h"
#include "fabric/mad/switch_info.h"
#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

struct SubnetPort {
  uint64_t guid = 0;        // port GUID (a switch port 0: the node GUID)
  uint64_t node_guid = 0;
  uint16_t lid = 0;         // base LID
  uint8_t lmc = 0;
  uint8_t port = 0;         // port number on its node (0 for a switch)
  bool is_switch = false;   // a switch's management port
  uint8_t neighbor_mtu = 0; // PortInfo NeighborMTU (IBTA enum: 1 = 256 .. 5 = 4096)
  uint8_t rate = 0;         // SA rate enum of the link (2 = 2.5 .. 21 = 400 Gb/s)
  std::vector<uint16_t> pkeys;  // P_KeyTable as read: every block NodeInfo.PartitionCap gives (0 where unread)
  // Its node's NodeInfo fields and NodeDescription, as discovered (the SA's
  // NodeRecords).
  uint8_t num_ports = 0;
  uint16_t partition_cap = 0, device_id = 0;
  uint32_t vendor_id = 0;
  uint64_t system_guid = 0;
  std::string description;
  // Where the port attaches to the switch graph: the routing switch index
  // (RoutingInput::switches) and the switch port facing it; for a switch
  // port 0, the switch itself and port 0. -1 if not attached.
  int32_t edge_switch = -1;
  uint8_t edge_port = 0;
};

// One physical port of a node, as the SM last read or wrote it.
struct SubnetNodePort {
  bool known = false;    // `info` holds an SMA's answer (Get or Set)
  mad::PortInfo info{};  // the latest answer, so what was written is in it
  int32_t peer_node = -1;  // index into Subnet::nodes of the other end of the link
  uint8_t peer_port = 0;
};

// One node (CA or switch), as discovered.
struct SubnetNode {
  mad::NodeInfo info{};  // as read; PortGUID and LocalPortNum of the port first reached
  std::string description;
  std::vector<SubnetNodePort> ports;  // by port number, 0 .. NumPorts
  std::vector<uint64_t> port_guids;   // by port number; 0 where not known
  int32_t routing_index = -1;         // a switch: its index in Subnet::graph.switches
  bool has_switch_info = false;
  mad::SwitchInfo switch_info{};      // a switch: the answer to the SM's SwitchInfo Set
  bool is_switch() const { return info.node_type == mad::NodeInfo::kTypeSwitch; }
};

// An SM the master knows of: itself, and those it read SMInfo from.
struct SubnetSm {
  uint64_t port_guid = 0;
  uint16_t lid = 0;  // the LID of its port (0 if the port has none)
  mad::SmInfo info{};
};

struct Subnet {
  uint64_t prefix = 0xfe80000000000000ull;  // subnet prefix (GID high 64 bits)
  uint16_t sm_lid = 0;
  uint64_t sm_port_guid = 0;
  std::vector<SubnetPort> ports;
  std::unordered_map<uint16_t, uint32_t> port_by_lid;   // every LID of every port -> index
  std::unordered_map<uint64_t, uint32_t> port_by_guid;  // port GUID -> index
  RoutingInput graph;
  RoutingOutput routes;
  // Directed route from the SM's port to each routing switch (index as in
  // graph.switches).
  std::vector<std::vector<uint8_t>> switch_paths;
  // Smallest MulticastFDBCap of any switch: MLIDs 0xC000 .. 0xC000 + cap - 1.
  uint16_t mcast_fdb_cap = 0;
  // Every node, in discovery order, by node GUID, and the SMs known.
  std::vector<SubnetNode> nodes;
  std::unordered_map<uint64_t, uint32_t> node_by_guid;
  std::vector<SubnetSm> sms;
  uint8_t lmc = 0;  // the LMC given to CA ports

  // OpenSM's SA walks its node, switch and port tables in key order, and
  // the keys are GUIDs as stored on the wire (big-endian): on the
  // little-endian hosts it runs on, that is the order of the byte-reversed
  // GUID. table_key gives that order; the two lists below follow it.
  static uint64_t table_key(uint64_t guid) { return __builtin_bswap64(guid); }
  // Indices into `nodes`, in OpenSM's node table order.
  std::vector<uint32_t> nodes_in_table_order() const {
    std::vector<uint32_t> v(nodes.size());
    for (uint32_t i = 0; i < v.size(); ++i) v[i] = i;
    std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
      return table_key(nodes[a].info.node_guid) < table_key(nodes[b].info.node_guid);
    });
    return v;
  }
  // The end ports, in OpenSM's port table order.
  std::vector<const SubnetPort*> ports_in_table_order() const {
    std::vector<const SubnetPort*> v;
    v.reserve(ports.size());
    for (const SubnetPort& p : ports) v.push_back(&p);
    std::sort(v.begin(), v.end(), [](const SubnetPort* a, const SubnetPort* b) {
      return table_key(a->guid) < table_key(b->guid);
    });
    return v;
  }

  const SubnetNode* node(uint64_t node_guid) const {
    auto it = node_by_guid.find(node_guid);
    return it == node_by_guid.end() ? nullptr : &nodes[it->second];
  }
  // The base LID OpenSM reports for a physical port: a switch port's is its
  // port 0's, a CA port's its own; 0 if the port has no LID.
  uint16_t base_lid(const SubnetNode& n, uint8_t port) const {
    const uint64_t guid = n.is_switch() ? n.info.node_guid
                                        : (port < n.port_guids.size() ? n.port_guids[port] : 0);
    const SubnetPort* p = by_guid(guid);
    return p ? p->lid : 0;
  }

  const SubnetPort* by_lid(uint16_t lid) const {
    auto it = port_by_lid.find(lid);
    return it == port_by_lid.end() ? nullptr : &ports[it->second];
  }
  const SubnetPort* by_guid(uint64_t guid) const {
    auto it = port_by_guid.find(guid);
    return it == port_by_guid.end() ? nullptr : &ports[it->second];
  }
};

}  // namespace ibfab::sm
