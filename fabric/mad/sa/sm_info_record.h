#pragma once
// SMInfoRecord (SA attribute 0x0018, IBTA 1.3 vol 1, 15.2.5.10): 25 bytes,
// padded to 32 (AttributeOffset 4).
//
//   0 LID   2 reserved(16)   4 SMInfo(21: GUID, SM_Key, ActCount,
//   Priority(4) | SMState(4))
// The embedded SMInfo uses the SMP codec (sm_info.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/sm_info.h"

namespace ibfab::mad {

namespace smir_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kGuid = 1ull << 2;
inline constexpr uint64_t kSmKey = 1ull << 3;
inline constexpr uint64_t kActCount = 1ull << 4;
inline constexpr uint64_t kPriority = 1ull << 5;
inline constexpr uint64_t kSmState = 1ull << 6;
}  // namespace smir_comp

struct SmInfoRecord {
  static constexpr uint16_t kAttributeId = 0x0018;
  static constexpr std::size_t kSize = 25;
  static constexpr uint16_t kAttributeOffset = 4;
  static constexpr std::size_t kSmInfoOffset = 4;
  static constexpr std::size_t kSmInfoBytes = 21;

  uint16_t lid = 0;
  SmInfo sm_info{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static SmInfoRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const SmInfoRecord&, const SmInfoRecord&) = default;
};

}  // namespace ibfab::mad
