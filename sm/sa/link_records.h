#pragma once
// LinkRecord answers (OpenSM 3.3.23 osm_sa_link_record.c) from the SM's
// view of the subnet: one record per direction of every link.
//
// - FromLID / ToLID masked: the port owning that LID (any LID of its LMC
//   range) is the source / destination node; an unknown LID gives no
//   record. With both, every (source port, destination port) pair that is
//   cabled; with one, that node's ports (only FromPort / ToPort when
//   masked); with neither, every port of every node, in OpenSM's node
//   table order (Subnet::table_key).
// - A record needs the two ends and the requester to share P_Keys pairwise
//   (pkey_rules.h), and the masked FromPort, ToPort, FromLID and ToLID to
//   match (LIDs compared as base LIDs, under the LMC mask).
// - FromLID and ToLID are base LIDs: a switch port's is its port 0's.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/link_record.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void link_records(const Subnet& subnet, uint32_t requester, const mad::LinkRecord& req,
                  uint64_t mask, std::vector<mad::LinkRecord>& out);

}  // namespace ibfab::sm
