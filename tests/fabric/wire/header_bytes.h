#pragma once
// Packs one header into exactly its kSize bytes, and back, for the tests
// that pin header fields to their IBTA offsets.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire::testing {

template <class H, std::size_t N>
std::array<uint8_t, N> packed(const H& h) {
  std::array<uint8_t, N> out{};
  Writer w(out);
  h.pack(w);
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.pos(), N);
  return out;
}

template <class H, std::size_t N>
H unpacked(const std::array<uint8_t, N>& bytes) {
  Reader r(bytes);
  auto h = H::unpack(r);
  EXPECT_TRUE(h.has_value());
  EXPECT_EQ(r.pos(), N);
  return h.value_or(H{});
}

}  // namespace ibfab::wire::testing
