#pragma once
// NodeRecord answers (OpenSM 3.3.23 osm_sa_node_record.c) from the SM's
// view of the subnet: nodes in OpenSM's node table order
// (Subnet::table_key); a switch gives one record (port 0), a CA one per
// port the SM knows.
//
// - Node-wide fields masked must equal the node's NodeInfo as discovered:
//   NodeGUID, SystemImageGUID, BaseVersion, ClassVersion, NodeType,
//   NumPorts, PartitionCap, DeviceID, Revision, VendorID, and the
//   NodeDescription (compared as a 64-byte string, up to its first NUL).
// - Per port: the port must share a P_Key with the requester; PortGUID,
//   LID (within the port's LMC range) and LocalPortNum, when masked, must
//   match.
// - The record: LID = the port's base LID, the node's NodeInfo with that
//   port's PortGUID and LocalPortNum, the NodeDescription.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/node_record.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void node_records(const Subnet& subnet, uint32_t requester, const mad::NodeRecord& req,
                  uint64_t mask, std::vector<mad::NodeRecord>& out);

}  // namespace ibfab::sm
