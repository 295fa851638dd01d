#pragma once
// P_Key comparisons the SA makes (IBTA 1.3 vol 1, 10.9.3): a P_Key's base
// is its low 15 bits (0 is invalid), bit 15 says full member.
#include <algorithm>
#include <cstdint>

#include "sm/subnet.h"

namespace ibfab::sm::pkey {

inline constexpr uint16_t kBase = 0x7FFF;
inline constexpr uint16_t kFull = 0x8000;
inline constexpr uint16_t kDefault = 0xFFFF;

// Same base, not both limited members.
inline bool match(uint16_t a, uint16_t b) {
  return (a & kBase) != 0 && (a & kBase) == (b & kBase) && ((a | b) & kFull) != 0;
}

// The port's table holds `p`'s base (either membership).
inline bool holds(const SubnetPort& port, uint16_t p) {
  if ((p & kBase) == 0) return false;
  return std::any_of(port.pkeys.begin(), port.pkeys.end(),
                     [&](uint16_t e) { return (e & kBase) == (p & kBase); });
}

// An entry of `a` matches an entry of `b`.
inline bool shared(const SubnetPort& a, const SubnetPort& b) {
  for (uint16_t x : a.pkeys)
    for (uint16_t y : b.pkeys)
      if (match(x, y)) return true;
  return false;
}

}  // namespace ibfab::sm::pkey
