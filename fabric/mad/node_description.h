#pragma once
// NodeDescription (SMP attribute 0x0010): 64 bytes of UTF-8 text, NUL padded.
// A description of exactly 64 bytes has no terminating NUL.
#include <cstdint>
#include <span>
#include <string>

namespace ibfab::mad {

struct NodeDescription {
  static constexpr uint16_t kAttributeId = 0x0010;
  static constexpr std::size_t kSize = 64;

  std::string text;

  // Writes kSize bytes: the first 64 bytes of `text`, then NULs
  // (precondition: data.size() >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Text up to the first NUL or the 64th byte, whichever comes first.
  static NodeDescription unpack(std::span<const uint8_t> data);

  friend bool operator==(const NodeDescription&, const NodeDescription&) = default;
};

}  // namespace ibfab::mad
