#pragma once
// LinkRecord (SA attribute 0x0020, IBTA 1.3 vol 1, 15.2.5.13): one direction
// of one link. 6 bytes, padded to 8 (AttributeOffset 1).
//
//   0 FromLID   2 FromPort   3 ToPort   4 ToLID   6 pad(16)
// A LID is the base LID of the node's port: a switch's port 0 LID for every
// port of the switch.
#include <cstddef>
#include <cstdint>
#include <span>

namespace ibfab::mad {

namespace lr_comp {
inline constexpr uint64_t kFromLid = 1ull << 0;
inline constexpr uint64_t kFromPort = 1ull << 1;
inline constexpr uint64_t kToPort = 1ull << 2;
inline constexpr uint64_t kToLid = 1ull << 3;
}  // namespace lr_comp

struct LinkRecord {
  static constexpr uint16_t kAttributeId = 0x0020;
  static constexpr std::size_t kSize = 6;
  static constexpr uint16_t kAttributeOffset = 1;

  uint16_t from_lid = 0;
  uint8_t from_port = 0;
  uint8_t to_port = 0;
  uint16_t to_lid = 0;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static LinkRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const LinkRecord&, const LinkRecord&) = default;
};

}  // namespace ibfab::mad
