#pragma once
// RMPP header (IBTA Vol 1, 13.6.2): bytes 24..35 of an RMPP-capable MAD
// (SA, vendor classes 0x30..0x4f).
//
//   24 RMPPVersion   25 RMPPType   26 RRespTime(7:3) | RMPPFlags(2:0)
//   27 RMPPStatus    28..31 SegmentNumber (Data1)
//   32..35 PayloadLength (DATA) / NewWindowLast (ACK) (Data2)
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

struct RmppHeader {
  static constexpr std::size_t kOffset = 24;
  static constexpr std::size_t kSize = 12;
  static constexpr uint8_t kVersion = 1;
  // RMPPType
  static constexpr uint8_t kTypeNone = 0;
  static constexpr uint8_t kTypeData = 1;
  static constexpr uint8_t kTypeAck = 2;
  static constexpr uint8_t kTypeStop = 3;
  static constexpr uint8_t kTypeAbort = 4;
  // RMPPFlags
  static constexpr uint8_t kFlagActive = 0x1;
  static constexpr uint8_t kFlagFirst = 0x2;
  static constexpr uint8_t kFlagLast = 0x4;
  // Data bytes per segment of an SA MAD (256 - 56).
  static constexpr std::size_t kSaSegmentData = 200;

  uint8_t version = 0;
  uint8_t type = kTypeNone;
  uint8_t resp_time = 0;  // 5 bits
  uint8_t flags = 0;      // 3 bits
  uint8_t status = 0;
  uint32_t data1 = 0;     // SegmentNumber
  uint32_t data2 = 0;     // PayloadLength / NewWindowLast

  bool active() const { return (flags & kFlagActive) != 0; }

  void pack(Writer& w) const;
  static std::optional<RmppHeader> unpack(Reader& r);

  friend bool operator==(const RmppHeader&, const RmppHeader&) = default;
};

}  // namespace ibfab::wire
