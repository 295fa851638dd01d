#pragma once
// VLArbitrationTableRecord (SA attribute 0x0036, IBTA 1.3 vol 1, 15.2.5.9): 72 bytes
// (AttributeOffset 9).
//
//   0 LID   2 OutputPortNum   3 BlockNum   4 reserved(32)
//   8 VLArbitrationTable(64)
// BlockNum is the VLArbitrationTable AttributeModifier high half: 1 low
// priority entries 0..31, 2 low 32..63, 3 high 0..31, 4 high 32..63.
// The embedded block uses the SMP codec (vl_arbitration_table.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/vl_arbitration_table.h"

namespace ibfab::mad {

namespace vlar_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kOutputPort = 1ull << 1;
inline constexpr uint64_t kBlock = 1ull << 2;
}  // namespace vlar_comp

struct VlArbitrationTableRecord {
  static constexpr uint16_t kAttributeId = 0x0036;
  static constexpr std::size_t kSize = 72;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kBlockOffset = 8;

  uint16_t lid = 0;
  uint8_t port = 0;
  uint8_t block = 0;
  VlArbitrationTable table{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static VlArbitrationTableRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const VlArbitrationTableRecord&, const VlArbitrationTableRecord&) = default;
};

}  // namespace ibfab::mad
