#pragma once
// PortInfoRecord answers (OpenSM 3.3.23 osm_sa_portinfo_record.c) from the
// SM's view of the subnet: every port whose PortInfo the SM read (all ports
// of a switch, 0 included; the known ports of a CA), in OpenSM's node table
// order (Subnet::table_key) then port order, or only the ports of the node
// owning a masked EndportLID / LID (unknown: none).
//
// - PortNum masked: that port only. The port must share a P_Key with the
//   requester.
// - Every masked PortInfo field OpenSM compares must equal the port's
//   PortInfo as last read or written (CapabilityMask and CapabilityMask2 on
//   their set bits only with `cap_mask_match`, AttributeModifier bit 31;
//   the LinkSpeedExt fields only when the node has IsExtendedSpeeds).
// - EndportLID: the port's base LID (a switch port's is its port 0's); a
//   masked EndportLID must be within its LMC range.
// - The record carries the port's PortInfo; Options echoed when masked;
//   with extended speeds active and Options bit 7 clear, the 10 Gb/s bit is
//   added to LinkSpeedSupported, LinkSpeedEnabled and LinkSpeedActive (so
//   that old clients see a QDR-capable link); M_Key is 0 unless `trusted`.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/port_info_record.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void port_info_records(const Subnet& subnet, uint32_t requester, const mad::PortInfoRecord& req,
                       uint64_t mask, bool cap_mask_match, bool trusted,
                       std::vector<mad::PortInfoRecord>& out);

}  // namespace ibfab::sm
