#pragma once
// Atomic Acknowledge Extended Transport Header (IBTA Vol 1, 9.3): 8 bytes
// after the AETH of an ATOMIC Acknowledge.
//
//   0..7     Original Remote Data (the 64-bit value before the operation)
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

struct AtomicAckEth {
  static constexpr std::size_t kSize = 8;

  uint64_t original = 0;

  void pack(Writer& w) const;
  static std::optional<AtomicAckEth> unpack(Reader& r);

  friend bool operator==(const AtomicAckEth&, const AtomicAckEth&) = default;
};

}  // namespace ibfab::wire
