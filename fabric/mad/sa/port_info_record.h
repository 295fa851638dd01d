#pragma once
// PortInfoRecord (SA attribute 0x0012, IBTA 1.3 vol 1, 15.2.5.3): 72 bytes
// (AttributeOffset 9).
//
//   0 EndportLID   2 PortNum   3 Options   4 reserved(32)   8 PortInfo(64)
// The embedded PortInfo uses the SMP codec (port_info.h). saquery -s asks
// with CapabilityMask matching: AttributeModifier bit 31 set means "the
// masked CapabilityMask bits must be set", not "equal".
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/port_info.h"

namespace ibfab::mad {

// PortInfoRecord ComponentMask bits: the record ID, then the PortInfo fields
// in record order (only the leading ones are named here).
namespace pir_comp {
inline constexpr uint64_t kEndportLid = 1ull << 0;
inline constexpr uint64_t kPortNum = 1ull << 1;
inline constexpr uint64_t kOptions = 1ull << 2;
inline constexpr uint64_t kMKey = 1ull << 3;
inline constexpr uint64_t kGidPrefix = 1ull << 4;
inline constexpr uint64_t kLid = 1ull << 5;
inline constexpr uint64_t kMasterSmLid = 1ull << 6;
inline constexpr uint64_t kCapabilityMask = 1ull << 7;
}  // namespace pir_comp

// AttributeModifier bit 31 of a PortInfoRecord Get/GetTable: match
// CapabilityMask on its set bits only (ClassPortInfo IsPortInfoCapMaskMatch).
inline constexpr uint32_t kPirCapMaskMatchModifier = 1u << 31;

struct PortInfoRecord {
  static constexpr uint16_t kAttributeId = 0x0012;
  static constexpr std::size_t kSize = 72;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kPortInfoOffset = 8;

  uint16_t endport_lid = 0;
  uint8_t port_num = 0;
  uint8_t options = 0;
  PortInfo port_info{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static PortInfoRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const PortInfoRecord&, const PortInfoRecord&) = default;
};

}  // namespace ibfab::mad
