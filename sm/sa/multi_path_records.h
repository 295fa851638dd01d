#pragma once
// MultiPathRecord answers (OpenSM 3.3.23 osm_sa_multipath_record.c, GetMulti
// only): the PathRecords between every source and destination GID of the
// request, as path_records.h finds them for one pair.
//
// - SGIDCount and DGIDCount must be masked (else 0x0600), ServiceID masked
//   whole or not at all (else 0x0600); a masked MTU or Rate with its
//   selector must be a valid value (else 0x0200).
// - At most 11 GIDs are read (sources first). A source GID that is
//   multicast, or any GID outside the link-local and subnet prefixes, or
//   naming no port -> 0x0500. No source or no destination -> 0x0200.
// - Pairs are taken in order, each giving the PathRecord path_records gives
//   (the request's masked FlowLabel, HopLimit, TClass, P_Key, SL, MTU,
//   Rate, PacketLifeTime and ServiceID carried over), until NumbPath paths
//   (127 when not masked). OpenSM's dedicated alternate-path search for
//   two sources, two destinations and NumbPath 2 is not reproduced: those
//   pairs are taken in order too.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/multi_path_record.h"
#include "fabric/mad/sa/path_record.h"
#include "sm/sa/mcast_groups.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first; returns the SA status.
uint16_t multi_path_records(const Subnet& subnet, const McastGroups& groups, uint32_t requester,
                            const mad::MultiPathRecord& req, uint64_t mask, uint8_t packet_life,
                            std::vector<mad::PathRecord>& out);

}  // namespace ibfab::sm
