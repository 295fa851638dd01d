#pragma once
// MulticastForwardingTableRecord (SA attribute 0x0017, IBTA 1.3 vol 1, 15.2.5.8): 72 bytes
// (AttributeOffset 9).
//
//   0 LID   2 Position(4) | reserved(3) | BlockNum(9)   4 reserved(32)
//   8 MulticastForwardingTable(64)
// LID is the switch's port 0 LID.
// The embedded block uses the SMP codec (forwarding_tables.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/forwarding_tables.h"

namespace ibfab::mad {

namespace mftr_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kPosition = 1ull << 1;
inline constexpr uint64_t kBlock = 1ull << 3;
}  // namespace mftr_comp

struct MftRecord {
  static constexpr uint16_t kAttributeId = 0x0017;
  static constexpr std::size_t kSize = 72;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kBlockOffset = 8;

  uint16_t lid = 0;
  uint8_t position = 0;  // 4 bits
  uint16_t block = 0;    // 9 bits
  MulticastForwardingTable mft{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static MftRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const MftRecord&, const MftRecord&) = default;
};

}  // namespace ibfab::mad
