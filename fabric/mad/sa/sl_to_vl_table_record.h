#pragma once
// SLtoVLMappingTableRecord (SA attribute 0x0013, IBTA 1.3 vol 1, 15.2.5.4):
// 16 bytes (AttributeOffset 2).
//
//   0 LID   2 InputPortNum   3 OutputPortNum   4 reserved(32)
//   8 SLtoVLMappingTable(8)
// LID: a CA port's own, or the switch's port 0 LID.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/sl_to_vl_table.h"

namespace ibfab::mad {

namespace slvr_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kInputPort = 1ull << 1;
inline constexpr uint64_t kOutputPort = 1ull << 2;
}  // namespace slvr_comp

struct SlToVlTableRecord {
  static constexpr uint16_t kAttributeId = 0x0013;
  static constexpr std::size_t kSize = 16;
  static constexpr uint16_t kAttributeOffset = 2;
  static constexpr std::size_t kTableOffset = 8;

  uint16_t lid = 0;
  uint8_t input_port = 0;
  uint8_t output_port = 0;
  SlToVlTable table{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static SlToVlTableRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const SlToVlTableRecord&, const SlToVlTableRecord&) = default;
};

}  // namespace ibfab::mad
