#pragma once
// 24-bit packet sequence numbers (IBTA Vol 1, 9.7.1): arithmetic modulo
// 2^24, and their order within half the space (a PSN up to 2^23 - 1 ahead
// of another is later, one up to 2^23 behind is earlier).
#include <cstdint>

namespace ibfab::fabric::rc {

inline constexpr uint32_t kPsnMask = 0xFFFFFF;

inline uint32_t psn_add(uint32_t psn, int64_t n) { return static_cast<uint32_t>(psn + n) & kPsnMask; }

// a - b as a signed distance in [-2^23, 2^23).
inline int32_t psn_diff(uint32_t a, uint32_t b) {
  return static_cast<int32_t>((a - b) << 8) >> 8;
}

}  // namespace ibfab::fabric::rc
