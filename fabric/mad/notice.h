#pragma once
// Notice (attribute 0x0002, IBTA 1.3 vol 1, 13.4.8.2): the payload of a Trap
// and of an SA Report. 80 bytes:
//   0 IsGeneric 7 | Type 6:0
//   1 ProducerType (generic) or VendorID (vendor), 24 bits
//   4 TrapNumber (generic) or DeviceID (vendor)
//   6 IssuerLID   8 NoticeToggle 15 | NoticeCount 14:0
//  10 DataDetails (54 bytes)   64 IssuerGID (16 bytes)
#include <array>
#include <cstdint>
#include <span>

#include "fabric/mad/gid.h"

namespace ibfab::mad {

namespace notice_type {
inline constexpr uint8_t kFatal = 0;
inline constexpr uint8_t kUrgent = 1;
inline constexpr uint8_t kSecurity = 2;
inline constexpr uint8_t kSubnetManagement = 3;
inline constexpr uint8_t kInfo = 4;
inline constexpr uint8_t kEmpty = 0x7F;
}  // namespace notice_type

namespace producer_type {
inline constexpr uint32_t kCa = 1;
inline constexpr uint32_t kSwitch = 2;
inline constexpr uint32_t kRouter = 3;
inline constexpr uint32_t kClassManager = 4;
}  // namespace producer_type

namespace trap_number {
inline constexpr uint16_t kGidInService = 64;
inline constexpr uint16_t kGidOutOfService = 65;
inline constexpr uint16_t kMcGroupCreated = 66;
inline constexpr uint16_t kMcGroupDeleted = 67;
inline constexpr uint16_t kUnpath = 68;
inline constexpr uint16_t kRepath = 69;
inline constexpr uint16_t kLinkStateChanged = 128;
inline constexpr uint16_t kLinkIntegrityThreshold = 129;
inline constexpr uint16_t kBufferOverrunThreshold = 130;
inline constexpr uint16_t kFlowControlWatchdog = 131;
inline constexpr uint16_t kLocalChanges = 144;
inline constexpr uint16_t kSystemImageGuidChanged = 145;
inline constexpr uint16_t kBadMKey = 256;
inline constexpr uint16_t kBadPKey = 257;
inline constexpr uint16_t kBadQKey = 258;
inline constexpr uint16_t kSwitchBadPKey = 259;
}  // namespace trap_number

struct Notice {
  static constexpr uint16_t kAttributeId = 0x0002;
  static constexpr std::size_t kSize = 80;
  static constexpr std::size_t kDataDetailsSize = 54;

  bool is_generic = true;
  uint8_t type = notice_type::kInfo;  // 7 bits
  uint32_t producer_type = 0;         // 24 bits; VendorID when !is_generic
  uint16_t trap_number = 0;           // DeviceID when !is_generic
  uint16_t issuer_lid = 0;
  bool notice_toggle = false;
  uint16_t notice_count = 0;          // 15 bits
  std::array<uint8_t, kDataDetailsSize> data_details{};
  Gid issuer_gid{};

  // Traps 64..67 carry 6 reserved bytes then a GID (the port GID, or the
  // MGID for 66/67) in DataDetails.
  void set_details_gid(const Gid& gid);
  Gid details_gid() const;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static Notice unpack(std::span<const uint8_t> data);

  friend bool operator==(const Notice&, const Notice&) = default;
};

}  // namespace ibfab::mad
