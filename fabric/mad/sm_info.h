#pragma once
// SMInfo (SMP attribute 0x0020, IBTA 1.3 vol 1, 14.2.5.13): 24 bytes.
//   0 GUID(64)  8 SM_Key(64)  16 ActCount(32)  20 Priority 7:4 | SMState 3:0
//  21..23 reserved
// A Get answers with the SM's own state; a Set carries one of the
// sm_info_modifier values in the AttributeModifier.
#include <cstdint>
#include <span>

namespace ibfab::mad {

namespace sm_state {
inline constexpr uint8_t kNotActive = 0;
inline constexpr uint8_t kDiscovering = 1;
inline constexpr uint8_t kStandby = 2;
inline constexpr uint8_t kMaster = 3;
}  // namespace sm_state

// AttributeModifier of SubnSet(SMInfo).
namespace sm_info_modifier {
inline constexpr uint32_t kHandover = 1;
inline constexpr uint32_t kAcknowledge = 2;
inline constexpr uint32_t kDisable = 3;
inline constexpr uint32_t kStandby = 4;
inline constexpr uint32_t kDiscover = 5;
}  // namespace sm_info_modifier

struct SmInfo {
  static constexpr uint16_t kAttributeId = 0x0020;
  static constexpr std::size_t kSize = 24;

  uint64_t guid = 0;
  uint64_t sm_key = 0;
  uint32_t act_count = 0;
  uint8_t priority = 0;  // 4 bits
  uint8_t sm_state = sm_state::kNotActive;  // 4 bits

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static SmInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const SmInfo&, const SmInfo&) = default;
};

// IBTA SM election order: true if `a` outranks `b` (higher priority wins, a
// tie goes to the lower GUID).
constexpr bool sm_outranks(const SmInfo& a, const SmInfo& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.guid < b.guid;
}

}  // namespace ibfab::mad
