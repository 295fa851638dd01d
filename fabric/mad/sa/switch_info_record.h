#pragma once
// SwitchInfoRecord (SA attribute 0x0014, IBTA 1.3 vol 1, 15.2.5.5): 24
// bytes (AttributeOffset 3).
//
//   0 LID   2 reserved(16)   4 SwitchInfo(20)
// The embedded SwitchInfo uses the SMP codec (switch_info.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/switch_info.h"

namespace ibfab::mad {

namespace swir_comp {
inline constexpr uint64_t kLid = 1ull << 0;
}  // namespace swir_comp

struct SwitchInfoRecord {
  static constexpr uint16_t kAttributeId = 0x0014;
  static constexpr std::size_t kSize = 24;
  static constexpr uint16_t kAttributeOffset = 3;
  static constexpr std::size_t kSwitchInfoOffset = 4;

  uint16_t lid = 0;
  SwitchInfo switch_info{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static SwitchInfoRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const SwitchInfoRecord&, const SwitchInfoRecord&) = default;
};

}  // namespace ibfab::mad
