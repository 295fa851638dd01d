#pragma once
// SMInfoRecord answers (OpenSM 3.3.23 osm_sa_sminfo_record.c) from the SMs
// the master knows (Subnet::sms: itself first, then the SMs its last heavy
// sweep read SMInfo from).
//
// - LID masked: the port owning it (unknown: no record); the master's own
//   record if that port is the master's, else that SM's if known.
// - The master's record needs its port to share a P_Key with the
//   requester; GUID, Priority and SMState masked must match.
// - Records carry LID (the SM port's base LID), GUID, ActCount and
//   Priority | SMState; SM_Key is 0.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/sm_info_record.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void sm_info_records(const Subnet& subnet, uint32_t requester, const mad::SmInfoRecord& req,
                     uint64_t mask, std::vector<mad::SmInfoRecord>& out);

}  // namespace ibfab::sm
