#pragma once
// P_KeyTableRecord and GuidInfoRecord answers (OpenSM 3.3.23
// osm_sa_pkey_record.c, osm_sa_guidinfo_record.c) from the SM's view of
// the subnet.
//
// P_KeyTableRecord (the caller refuses untrusted requests with 0x0200):
// end ports in OpenSM's port table order (Subnet::table_key), or the port
// owning a masked LID (an unknown LID gives none). A CA port: itself (PortNum forced to its
// number); a switch: every port, or PortNum's when masked (out of range:
// none). A port sharing no P_Key with the requester is skipped; one record
// per block held (BlockNum masked: that block). LID: a CA port's own, a
// switch's port 0 LID. The SM reads every block of an end port's table
// (NodeInfo.PartitionCap entries); switch external ports have no table
// (no partition enforcement), hence no record.
//
// GuidInfoRecord (Get/GetTable): CA ports and switch port 0s, in OpenSM's
// node table order, with a non-zero GUIDCap; one record per 8 GUIDs of GUIDCap
// (BlockNum masked: that block). The SM sets no alias GUIDs, so block 0
// holds the port GUID and every other entry is 0; masked GUID entries must
// equal that (GUID 0: the requester's port GUID when BlockNum is 0).
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/guid_info_record.h"
#include "fabric/mad/sa/pkey_table_record.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void pkey_table_records(const Subnet& subnet, uint32_t requester,
                        const mad::PKeyTableRecord& req, uint64_t mask,
                        std::vector<mad::PKeyTableRecord>& out);
void guid_info_records(const Subnet& subnet, uint32_t requester, const mad::GuidInfoRecord& req,
                       uint64_t mask, std::vector<mad::GuidInfoRecord>& out);

}  // namespace ibfab::sm
