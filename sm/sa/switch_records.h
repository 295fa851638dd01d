#pragma once
// SwitchInfoRecord and LinearForwardingTableRecord answers (OpenSM 3.3.23
// osm_sa_sw_info_record.c, osm_sa_lft_record.c) from the SM's view of the
// subnet. Switches are walked in OpenSM's node table order
// (Subnet::table_key); a switch whose port 0 shares no P_Key with the
// requester is skipped.
//
// SwitchInfoRecord: LID = the switch's port 0 LID; SwitchInfo as the SMA
// answered the SM's Set in the last heavy sweep (OpenSM's too keeps
// MulticastFDBTop as of its sweep, not as its multicast manager moves it).
// LID masked: 0 matches nothing, otherwise it must be within the switch's
// LID range.
//
// LinearForwardingTableRecord: one record per block 0 .. LinearFDBTop / 64
// (BlockNum masked: that block only, none past the top), the entries as
// programmed (0xFF: no route). LID masked: within the switch's LID range.
//
// MulticastForwardingTableRecord: for a switch with multicast entries, one
// record per (block, position) from block 0 to the block of its highest
// MLID and position 0 to the one of its highest port (BlockNum or Position
// masked: that one only, none past the last), the content the SM wants
// there (mft_view.h). LID masked: within the switch's LID range.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/lft_record.h"
#include "fabric/mad/sa/mft_record.h"
#include "fabric/mad/sa/switch_info_record.h"
#include "sm/sa/mft_view.h"
#include "sm/subnet.h"

namespace ibfab::sm {

// `out` is cleared first. `requester` indexes subnet.ports.
void switch_info_records(const Subnet& subnet, uint32_t requester,
                         const mad::SwitchInfoRecord& req, uint64_t mask,
                         std::vector<mad::SwitchInfoRecord>& out);
void lft_records(const Subnet& subnet, uint32_t requester, const mad::LftRecord& req,
                 uint64_t mask, std::vector<mad::LftRecord>& out);
void mft_records(const Subnet& subnet, const MftView& mfts, uint32_t requester,
                 const mad::MftRecord& req, uint64_t mask, std::vector<mad::MftRecord>& out);

}  // namespace ibfab::sm
