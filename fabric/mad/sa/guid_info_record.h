#pragma once
// GuidInfoRecord (SA attribute 0x0030, IBTA 1.3 vol 1, 15.2.5.18): 72 bytes
// (AttributeOffset 9).
//
//   0 LID   2 BlockNum   3 reserved(8)   4 reserved(32)   8 GUIDInfo(64)
// The embedded block uses the SMP codec (guid_info.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/guid_info.h"

namespace ibfab::mad {

namespace gir_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kBlock = 1ull << 1;
inline constexpr uint64_t kGid0 = 1ull << 4;
}  // namespace gir_comp

struct GuidInfoRecord {
  static constexpr uint16_t kAttributeId = 0x0030;
  static constexpr std::size_t kSize = 72;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kBlockOffset = 8;

  uint16_t lid = 0;
  uint8_t block = 0;
  GuidInfo guid_info{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static GuidInfoRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const GuidInfoRecord&, const GuidInfoRecord&) = default;
};

}  // namespace ibfab::mad
