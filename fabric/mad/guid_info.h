#pragma once
// GUIDInfo (SMP attribute 0x0014, IBTA 1.3 vol 1, 14.2.5.5): one block of
// eight big-endian GUIDs. AttributeModifier = block; GUID index 8*block + i.
// Index 0 is the port GUID and is read-only.
#include <array>
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct GuidInfo {
  static constexpr uint16_t kAttributeId = 0x0014;
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kEntriesPerBlock = 8;

  std::array<uint64_t, kEntriesPerBlock> guid{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; entries past a short span read as zero.
  static GuidInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const GuidInfo&, const GuidInfo&) = default;
};

}  // namespace ibfab::mad
