#pragma once
// VLArbitrationTable (SMP attribute 0x0018, IBTA 1.3 vol 1, 14.2.5.9): 32
// entries of two bytes, reserved(4) | VL(4), then Weight(8).
// AttributeModifier (31:16): 1 low-priority entries 0..31, 2 low 32..63,
// 3 high-priority 0..31, 4 high 32..63; bits 7:0 the output port (switches).
#include <array>
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct VlArbitrationTable {
  static constexpr uint16_t kAttributeId = 0x0018;
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kEntriesPerBlock = 32;

  struct Entry {
    uint8_t vl = 0;  // 4 bits
    uint8_t weight = 0;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  std::array<Entry, kEntriesPerBlock> entry{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; entries past a short span read as zero.
  static VlArbitrationTable unpack(std::span<const uint8_t> data);

  friend bool operator==(const VlArbitrationTable&, const VlArbitrationTable&) = default;
};

}  // namespace ibfab::mad
