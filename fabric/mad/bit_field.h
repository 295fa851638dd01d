#pragma once
// Sub-byte fields of IBTA attributes. Bit 0 is the least significant bit of
// the containing byte or word; the IBTA tables number bits from the most
// significant end, so a field the spec places at bits 7:4 of a byte is
// put_bits(v, 4, 4) here. put_bits masks v to `width` bits, so an
// out-of-range value never spills into a neighbouring field.
#include <cstdint>

namespace ibfab::mad {

constexpr uint32_t put_bits(uint32_t v, unsigned width, unsigned shift) {
  return (v & ((uint32_t{1} << width) - 1)) << shift;
}

template <class T = uint8_t>
constexpr T get_bits(uint32_t word, unsigned width, unsigned shift) {
  return static_cast<T>((word >> shift) & ((uint32_t{1} << width) - 1));
}

constexpr uint8_t to_u8(uint32_t v) { return static_cast<uint8_t>(v); }

}  // namespace ibfab::mad
