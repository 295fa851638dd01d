#pragma once
// IBTA PMA counters stop at their maximum instead of wrapping (16.1.3.5).
#include <concepts>
#include <cstdint>
#include <limits>

namespace ibfab::mad {

// Adds n to a counter `width` bits wide (1..bit width of T), stopping at
// 2^width - 1. A counter already above that maximum is clamped to it.
template <std::unsigned_integral T>
constexpr void add_saturating(T& counter, uint64_t n,
                              unsigned width = std::numeric_limits<T>::digits) {
  const uint64_t max = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t cur = counter < max ? uint64_t{counter} : max;
  counter = static_cast<T>(n > max - cur ? max : cur + n);
}

}  // namespace ibfab::mad
