#pragma once
// The P_Key table each end port gets from a partition configuration, as
// OpenSM 3.3.23's pkey manager (osm_pkey_mgr.c, keep_pkey_indexes off,
// allow_both_pkeys off) computes it afresh each sweep:
//   - a port is a member of a partition if a member line names it (by GUID,
//     ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS or SELF), the last line that
//     names it deciding full or limited; GUIDs not in the subnet are
//     ignored;
//   - index 0 holds the Default partition's P_Key (0x7FFF base), or the
//     P_Key of a partition whose definition had indx0 for that port;
//   - the port's other P_Keys follow from index 1 in OpenSM's partition
//     table order (by the byte-swapped base P_Key, its map key on a
//     little-endian host);
//   - a full member's entry has bit 15 set, a limited member's has not;
//     entries beyond the port's PartitionCap are dropped (OpenSM logs
//     ERR 0512); the rest of the table is 0.
// Switch external ports are not given tables: ibfab's switches have no
// partition enforcement (SwitchInfo.PartitionEnforcementCap 0), so
// OpenSM's part_enforce leaves them alone too.
#include <cstdint>
#include <span>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "sm/partitions/partition_config.h"

namespace ibfab::sm::partitions {

struct EndPortRef {
  uint64_t guid = 0;
  uint8_t node_type = 1;        // NodeInfo.NodeType: 1 CA, 2 switch, 3 router
  uint16_t partition_cap = 0;   // NodeInfo.PartitionCap
};

// The table for each of `ports` (same order), PartitionCap entries long
// (at least one).
std::vector<std::vector<uint16_t>> assign_pkeys(const PartitionConfig& config, std::span<const EndPortRef> ports,
                                                uint64_t sm_port_guid);

// The multicast groups the configuration creates, as the SA's records
// (selectors Exactly, hop limit 0 at link-local scope else 0xFF), in the
// order the file creates them (OpenSM gives their MLIDs in that order).
std::vector<mad::McMemberRecord> well_known_groups(const PartitionConfig& config);

}  // namespace ibfab::sm::partitions
