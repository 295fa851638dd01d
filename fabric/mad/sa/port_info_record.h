#pragma once
// PortInfoRecord (SA attribute 0x0012, IBTA 1.3 vol 1, 15.2.5.3): 68 bytes,
// padded to 72 (AttributeOffset 9).
//
//   0 EndportLID   2 PortNum   3 Options   4 PortInfo(64)
// (OpenSM's ib_portinfo_record_t and saquery read PortInfo at byte 4.)
// The embedded PortInfo uses the SMP codec (port_info.h). saquery -s asks
// with CapabilityMask matching: AttributeModifier bit 31 set means "the
// masked CapabilityMask bits must be set", not "equal".
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/port_info.h"

namespace ibfab::mad {

// PortInfoRecord ComponentMask bits: the record ID, then the PortInfo fields
// in record order (bit 19, 44, 46, 51 and 56 are reserved fields).
namespace pir_comp {
inline constexpr uint64_t kEndportLid = 1ull << 0;
inline constexpr uint64_t kPortNum = 1ull << 1;
inline constexpr uint64_t kOptions = 1ull << 2;
inline constexpr uint64_t kMKey = 1ull << 3;
inline constexpr uint64_t kGidPrefix = 1ull << 4;
inline constexpr uint64_t kLid = 1ull << 5;
inline constexpr uint64_t kMasterSmLid = 1ull << 6;
inline constexpr uint64_t kCapabilityMask = 1ull << 7;
inline constexpr uint64_t kDiagCode = 1ull << 8;
inline constexpr uint64_t kMKeyLeasePeriod = 1ull << 9;
inline constexpr uint64_t kLocalPortNum = 1ull << 10;
inline constexpr uint64_t kLinkWidthEnabled = 1ull << 11;
inline constexpr uint64_t kLinkWidthSupported = 1ull << 12;
inline constexpr uint64_t kLinkWidthActive = 1ull << 13;
inline constexpr uint64_t kLinkSpeedSupported = 1ull << 14;
inline constexpr uint64_t kPortState = 1ull << 15;
inline constexpr uint64_t kPortPhysicalState = 1ull << 16;
inline constexpr uint64_t kLinkDownDefaultState = 1ull << 17;
inline constexpr uint64_t kMKeyProtectBits = 1ull << 18;
inline constexpr uint64_t kLmc = 1ull << 20;
inline constexpr uint64_t kLinkSpeedActive = 1ull << 21;
inline constexpr uint64_t kLinkSpeedEnabled = 1ull << 22;
inline constexpr uint64_t kNeighborMtu = 1ull << 23;
inline constexpr uint64_t kMasterSmSl = 1ull << 24;
inline constexpr uint64_t kVlCap = 1ull << 25;
inline constexpr uint64_t kInitType = 1ull << 26;
inline constexpr uint64_t kVlHighLimit = 1ull << 27;
inline constexpr uint64_t kVlArbitrationHighCap = 1ull << 28;
inline constexpr uint64_t kVlArbitrationLowCap = 1ull << 29;
inline constexpr uint64_t kInitTypeReply = 1ull << 30;
inline constexpr uint64_t kMtuCap = 1ull << 31;
inline constexpr uint64_t kVlStallCount = 1ull << 32;
inline constexpr uint64_t kHoqLife = 1ull << 33;
inline constexpr uint64_t kOperationalVls = 1ull << 34;
inline constexpr uint64_t kPartitionEnforcementInbound = 1ull << 35;
inline constexpr uint64_t kPartitionEnforcementOutbound = 1ull << 36;
inline constexpr uint64_t kFilterRawInbound = 1ull << 37;
inline constexpr uint64_t kFilterRawOutbound = 1ull << 38;
inline constexpr uint64_t kMKeyViolations = 1ull << 39;
inline constexpr uint64_t kPKeyViolations = 1ull << 40;
inline constexpr uint64_t kQKeyViolations = 1ull << 41;
inline constexpr uint64_t kGuidCap = 1ull << 42;
inline constexpr uint64_t kClientReregister = 1ull << 43;
inline constexpr uint64_t kSubnetTimeout = 1ull << 45;
inline constexpr uint64_t kRespTimeValue = 1ull << 47;
inline constexpr uint64_t kLocalPhyErrors = 1ull << 48;
inline constexpr uint64_t kOverrunErrors = 1ull << 49;
inline constexpr uint64_t kMaxCreditHint = 1ull << 50;
inline constexpr uint64_t kLinkRoundTripLatency = 1ull << 52;
inline constexpr uint64_t kCapabilityMask2 = 1ull << 53;
inline constexpr uint64_t kLinkSpeedExtActive = 1ull << 54;
inline constexpr uint64_t kLinkSpeedExtSupported = 1ull << 55;
inline constexpr uint64_t kLinkSpeedExtEnabled = 1ull << 57;
}  // namespace pir_comp

// AttributeModifier bit 31 of a PortInfoRecord Get/GetTable: match
// CapabilityMask on its set bits only (ClassPortInfo IsPortInfoCapMaskMatch).
inline constexpr uint32_t kPirCapMaskMatchModifier = 1u << 31;

struct PortInfoRecord {
  static constexpr uint16_t kAttributeId = 0x0012;
  static constexpr std::size_t kSize = 68;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kPortInfoOffset = 4;

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
