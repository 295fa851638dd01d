#pragma once
// LinearForwardingTableRecord (SA attribute 0x0015, IBTA 1.3 vol 1, 15.2.5.6): 72 bytes
// (AttributeOffset 9).
//
//   0 LID   2 BlockNum   4 reserved(32)   8 LinearForwardingTable(64)
// LID is the switch's port 0 LID.
// The embedded block uses the SMP codec (forwarding_tables.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/forwarding_tables.h"

namespace ibfab::mad {

namespace lftr_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kBlock = 1ull << 1;
}  // namespace lftr_comp

struct LftRecord {
  static constexpr uint16_t kAttributeId = 0x0015;
  static constexpr std::size_t kSize = 72;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kBlockOffset = 8;

  uint16_t lid = 0;
  uint16_t block = 0;
  LinearForwardingTable lft{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static LftRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const LftRecord&, const LftRecord&) = default;
};

}  // namespace ibfab::mad
