#pragma once
// PathRecord answers from the SM's view of the subnet (sm/subnet.h), as a
// pure function.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/path_record.h"
#include "sm/sa/mcast_groups.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// PathRecords for a request from port `requester` (SA-MULTICAST.md 7):
// - ServiceID masked half-way -> 0x0600 (the only status returned; an
//   unknown GID or LID gives no records);
// - source: masked SGID, else masked SLID, else the requester; the
//   destination: masked DGID, else masked DLID, else every end port;
// - a multicast DGID gives one record from the group (DLID = MLID, the
//   group's P_Key, SL, FlowLabel, TClass, HopLimit, MTU, Rate, PLT) if the
//   requester holds the group's P_Key;
// - unicast: MTU and Rate are the lower of the two end ports' (the SM
//   does not keep the inner links' figures), narrowed by masked
//   selectors; P_Key the masked one if both ports hold it, else the first
//   P_Key the two share; SL, TClass, FlowLabel, HopLimit as masked, else
//   0; PLT `packet_life` (0 for a path to itself); Reversible 1; one path
//   per (source, destination), from the base LIDs unless LIDs are masked.
// `out` is cleared first; a caller that keeps it across requests allocates
// only while it grows.
uint16_t path_records(const Subnet& subnet, const McastGroups& groups, uint32_t requester,
                      const mad::PathRecord& req, uint64_t mask, uint8_t packet_life,
                      std::vector<mad::PathRecord>& out);

}  // namespace ibfab::sm
