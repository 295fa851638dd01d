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
// - source: masked SGID, else masked SLID, else every end port (the
//   requester for a multicast DGID); the destination: masked DGID, else
//   masked DLID, else every end port; destinations outer, sources inner,
//   each in OpenSM's port table order (Subnet::table_key);
// - a multicast DGID gives one record from the group (DLID = MLID, the
//   group's P_Key, SL, FlowLabel, TClass, HopLimit, MTU, Rate, PLT) if the
//   requester holds the group's P_Key;
// - unicast: MTU and Rate are the smallest MTUCap and rate of every port
//   the SM's LFTs take the path through (source port, both ports of each
//   switch, destination port; a switch end is its port 0, a port whose
//   width or speed names no rate counts as 2.5 Gb/s), as OpenSM walks it;
//   no path where a route is missing. A view without routes (a Subnet
//   built by hand) takes the lower of the two end ports' NeighborMTU and
//   rate instead. Both are narrowed by masked
//   selectors; P_Key the masked one if both ports hold it, else the
//   source's entry of the first base (in OpenSM's byte-swapped key order)
//   the two share, as osm_physp_find_common_pkey; no path unless the
//   requester shares a P_Key with both ends (a port shares with itself;
//   two limited members share nothing); SL, TClass, FlowLabel, HopLimit as masked, else
//   0; PLT `packet_life` (0 for a path to itself); Reversible 1; one path
//   per (source, destination), from the base LIDs unless LIDs are masked.
// With `first_only` (a Get), the search stops at the first path found, as
// OpenSM's does; a Get naming both ends may still find several (LIDs of an
// LMC range). `out` is cleared first; a caller that keeps it across
// requests allocates only while it grows.
uint16_t path_records(const Subnet& subnet, const McastGroups& groups, uint32_t requester,
                      const mad::PathRecord& req, uint64_t mask, uint8_t packet_life,
                      std::vector<mad::PathRecord>& out, bool first_only = false);

}  // namespace ibfab::sm
