#pragma once
// What the SA needs to answer MulticastForwardingTableRecords: the MFT
// content the SM wants on each switch (the content it programs by SMP).
// The multicast manager implements it; the SA does not include the manager.
#include <cstdint>

#include "fabric/mad/forwarding_tables.h"

namespace ibfab::sm {

class MftView {
 public:
  virtual ~MftView() = default;
  // The highest MLID with an entry on switch `guid`; 0xBFFF if none.
  virtual uint16_t mft_top(uint64_t guid) const = 0;
  // One block of switch `guid`'s MFT.
  virtual mad::MulticastForwardingTable mft_block(uint64_t guid, mad::MftAddress a) const = 0;
};

}  // namespace ibfab::sm
