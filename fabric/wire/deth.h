#pragma once
// Datagram Extended Transport Header (IBTA Vol 1, 9.3.3): 8 bytes after the
// BTH of UD (and RD) packets.
//
//   0..3     Q_Key
//   byte 4   reserved
//   5..7     SrcQP
//
// For UD SEND_ONLY_WITH_IMMEDIATE the 4-byte ImmDt follows the DETH.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

struct Deth {
  static constexpr std::size_t kSize = 8;
  static constexpr std::size_t kImmediateSize = 4;
  // Q_Keys with the high bit set are controlled: only privileged consumers
  // may send them; QP1 uses the well-known one.
  static constexpr uint32_t kControlledQKeyBit = 0x80000000;
  static constexpr uint32_t kQp1QKey = 0x80010000;

  uint32_t qkey = 0;
  uint32_t src_qp = 0;  // 24 bits

  void pack(Writer& w) const;
  static std::optional<Deth> unpack(Reader& r);

  friend bool operator==(const Deth&, const Deth&) = default;
};

}  // namespace ibfab::wire
