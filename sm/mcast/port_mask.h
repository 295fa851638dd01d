#pragma once
// The ports one MFT entry forwards to on one switch: up to 256 ports, in
// the MFT's layout of 16 positions of 16 ports (position p, bit b = port
// 16p + b). A value type with no allocation.
#include <array>
#include <cstdint>

#include "fabric/mad/forwarding_tables.h"

namespace ibfab::sm {

struct PortMask {
  std::array<uint16_t, 16> position{};

  void set(uint8_t port) { position[mad::mft_position_of(port)] |= mad::mft_bit_of(port); }
  void clear(uint8_t port) { position[mad::mft_position_of(port)] &= static_cast<uint16_t>(~mad::mft_bit_of(port)); }
  bool test(uint8_t port) const { return (position[mad::mft_position_of(port)] & mad::mft_bit_of(port)) != 0; }
  bool empty() const {
    for (const uint16_t p : position)
      if (p) return false;
    return true;
  }
  friend bool operator==(const PortMask&, const PortMask&) = default;
};

}  // namespace ibfab::sm
