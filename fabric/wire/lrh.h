#pragma once
// Local Route Header (IBTA Vol 1, 7.7): the first 8 bytes of every packet.
//
//   byte 0   VL(7:4)  LVer(3:0)
//   byte 1   SL(7:4)  reserved(3:2)  LNH(1:0)
//   2..3     DLID
//   4..5     reserved(15:11)  PktLen(10:0)
//   6..7     SLID
//
// PktLen counts 4-byte words from the first byte of the LRH to the last byte
// of the ICRC (everything but the 2-byte VCRC). Reserved bits are packed as
// zero and ignored when unpacked.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

struct Lrh {
  static constexpr std::size_t kSize = 8;
  // Fixed offsets, for hot paths that read one field of a packed packet.
  static constexpr std::size_t kDlidOffset = 2;
  static constexpr std::size_t kPktLenOffset = 4;
  static constexpr std::size_t kSlidOffset = 6;

  static constexpr uint8_t kLinkVersion = 0;
  // Link Next Header.
  static constexpr uint8_t kLnhRaw = 0;        // raw packet
  static constexpr uint8_t kLnhIpv6Raw = 1;    // IPv6 raw packet
  static constexpr uint8_t kLnhIbaLocal = 2;   // BTH follows
  static constexpr uint8_t kLnhIbaGlobal = 3;  // GRH follows
  static constexpr uint8_t kVlManagement = 15; // VL15: subnet management
  static constexpr uint16_t kMaxPktLen = 0x7ff;
  static constexpr uint16_t kPermissiveLid = 0xffff;
  static constexpr uint16_t kMulticastLidBase = 0xc000;

  uint8_t vl = 0;     // 4 bits
  uint8_t lver = kLinkVersion;  // 4 bits
  uint8_t sl = 0;     // 4 bits
  uint8_t lnh = kLnhIbaLocal;   // 2 bits
  uint16_t dlid = 0;
  uint16_t pkt_len = 0;  // 11 bits, in 4-byte words
  uint16_t slid = 0;

  void pack(Writer& w) const;
  // nullopt only if r runs out; field values are not validated here.
  static std::optional<Lrh> unpack(Reader& r);

  friend bool operator==(const Lrh&, const Lrh&) = default;
};

inline bool is_multicast_lid(uint16_t lid) {
  return lid >= Lrh::kMulticastLidBase && lid != Lrh::kPermissiveLid;
}

}  // namespace ibfab::wire
