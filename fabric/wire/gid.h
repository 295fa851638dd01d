#pragma once
// A 128-bit InfiniBand Global Identifier, stored in wire (network) order.
//
// A GID is a 64-bit subnet prefix followed by a 64-bit interface ID (the port
// GUID for a unicast GID). Multicast GIDs start with 0xff. The text form is
// the IPv6 one: parse() accepts every RFC 4291 spelling ("::" compression,
// leading zeros, an IPv4 dotted quad in the last 32 bits); str() prints the
// RFC 5952 canonical form (lower case, no leading zeros, the longest run of
// two or more zero groups compressed, leftmost on ties, all-hex).
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ibfab::wire {

struct Gid {
  static constexpr std::size_t kSize = 16;
  // Longest text str() can produce, without the terminating NUL.
  static constexpr std::size_t kMaxTextLen = 39;

  std::array<uint8_t, kSize> raw{};

  static Gid from(uint64_t prefix, uint64_t guid);
  static std::optional<Gid> parse(std::string_view text);

  uint64_t prefix() const;
  uint64_t guid() const;
  bool is_multicast() const { return raw[0] == 0xff; }
  bool is_zero() const;

  // Writes the canonical text into out (no allocation) and returns its
  // length; out holds at least kMaxTextLen + 1 bytes and is NUL-terminated.
  std::size_t format(char* out) const;
  std::string str() const;

  friend auto operator<=>(const Gid&, const Gid&) = default;
};

}  // namespace ibfab::wire

template <>
struct std::hash<ibfab::wire::Gid> {
  std::size_t operator()(const ibfab::wire::Gid& g) const noexcept {
    const uint64_t h = g.prefix() * 0x9e3779b97f4a7c15ULL ^ g.guid();
    return std::hash<uint64_t>{}(h);
  }
};
