#pragma once
#include <cstdint>

namespace ibfab::fabric {

// Why the fabric lost a packet. Counted per reason in Fabric::Stats.
enum class DropReason : uint8_t {
  None,
  LinkDown,     // the link (or a node at either end) is down
  TooLarge,     // larger than the link MTU plus headers
  Loss,         // random loss on the link (its loss probability)
  NotActive,    // a data packet on a port that is not Active
  HoqLifetime,  // would wait longer than the port's HOQLife at the head of its queue
  NoRoute,      // no LFT/MFT entry for the DLID at a switch
  kCount
};

const char* to_string(DropReason r);

}  // namespace ibfab::fabric
