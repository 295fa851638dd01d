#pragma once
// What the SM knows about the subnet after a sweep: its end ports (CA
// ports and switch port 0s) with the LIDs it assigned and the capabilities
// it read, the switch graph it routed and the routes, and the directed
// routes to every switch. The SA and the multicast manager read it; only
// the SM writes it (at the end of each heavy sweep). Everything here came
// from SMPs: it is the SM's view, which may lag behind the fabric.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

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
  std::vector<uint16_t> pkeys;  // P_KeyTable as read (at least block 0)
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
