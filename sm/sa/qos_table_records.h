#pragma once
// SLtoVLMappingTableRecord and VLArbitrationTableRecord answers (OpenSM
// 3.3.23 osm_sa_slvl_record.c, osm_sa_vlarb_record.c). These tables are
// the SM's QoS configuration: OpenSM reads and writes them only with QoS
// enabled, and answers its own (all-zero) tables otherwise. This SM has no
// QoS configuration, so every table it answers is all zero, as OpenSM's
// with its default options.
//
// Ports: the end port owning a masked LID (unknown: none), else every end
// port in OpenSM's port table order; a CA port stands for itself, a switch
// for all its ports.
// - SL2VL: a CA port gives one record (ports 0); a switch one per
//   (OutputPort, InputPort) pair over ports 0..N, or the masked ones. The
//   output port must share a P_Key with the requester.
// - VLArbitration: a CA port gives blocks 1..4 of itself; a switch blocks
//   1..4 of every port, or of the masked OutputPort (out of range: none);
//   BlockNum masked: that block only. The port must share a P_Key with the
//   requester.
// LID: a CA port's own, a switch's port 0 LID.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/sl_to_vl_table_record.h"
#include "fabric/mad/sa/vl_arbitration_table_record.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void sl_to_vl_records(const Subnet& subnet, uint32_t requester, const mad::SlToVlTableRecord& req,
                      uint64_t mask, std::vector<mad::SlToVlTableRecord>& out);
void vl_arbitration_records(const Subnet& subnet, uint32_t requester,
                            const mad::VlArbitrationTableRecord& req, uint64_t mask,
                            std::vector<mad::VlArbitrationTableRecord>& out);

}  // namespace ibfab::sm
