#pragma once
// SA header (IBTA Vol 1, 15.2.1.1): bytes 36..55 of an SA MAD, after the
// common MAD header and the RMPP header.
//
//   36..43 SM_Key   44..45 AttributeOffset (record size in 8-byte words)
//   46..47 reserved 48..55 ComponentMask    56..255 SA data (200 bytes)
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

namespace sa_attr {
inline constexpr uint16_t kClassPortInfo = 0x0001;
inline constexpr uint16_t kNotice = 0x0002;
inline constexpr uint16_t kInformInfo = 0x0003;
inline constexpr uint16_t kNodeRecord = 0x0011;
inline constexpr uint16_t kPortInfoRecord = 0x0012;
inline constexpr uint16_t kSlToVlTableRecord = 0x0013;
inline constexpr uint16_t kSwitchInfoRecord = 0x0014;
inline constexpr uint16_t kLinearForwardingTableRecord = 0x0015;
inline constexpr uint16_t kMulticastForwardingTableRecord = 0x0017;
inline constexpr uint16_t kSmInfoRecord = 0x0018;
inline constexpr uint16_t kLinkRecord = 0x0020;
inline constexpr uint16_t kGuidInfoRecord = 0x0030;
inline constexpr uint16_t kServiceRecord = 0x0031;
inline constexpr uint16_t kPKeyTableRecord = 0x0033;
inline constexpr uint16_t kPathRecord = 0x0035;
inline constexpr uint16_t kVlArbitrationTableRecord = 0x0036;
inline constexpr uint16_t kMcMemberRecord = 0x0038;
inline constexpr uint16_t kTraceRecord = 0x0039;
inline constexpr uint16_t kMultiPathRecord = 0x003a;
inline constexpr uint16_t kInformInfoRecord = 0x00f3;
}  // namespace sa_attr

struct SaHeader {
  static constexpr std::size_t kOffset = 36;
  static constexpr std::size_t kSize = 20;
  static constexpr std::size_t kDataOffset = 56;
  static constexpr std::size_t kDataSize = 200;

  uint64_t sm_key = 0;
  uint16_t attr_offset = 0;
  uint64_t comp_mask = 0;

  void pack(Writer& w) const;
  static std::optional<SaHeader> unpack(Reader& r);

  friend bool operator==(const SaHeader&, const SaHeader&) = default;
};

}  // namespace ibfab::wire
