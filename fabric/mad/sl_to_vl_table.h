#pragma once
// SLtoVLMappingTable (SMP attribute 0x0017, IBTA 1.3 vol 1, 14.2.5.8): the
// VL of each of the 16 SLs, four bits each, SL 0 in the high nibble of
// byte 0. AttributeModifier: input port (15:8) and output port (7:0) on a
// switch; 0 on a CA.
#include <array>
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct SlToVlTable {
  static constexpr uint16_t kAttributeId = 0x0017;
  static constexpr std::size_t kSize = 8;

  std::array<uint8_t, 16> vl{};  // by SL, 4 bits each

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; entries past a short span read as zero.
  static SlToVlTable unpack(std::span<const uint8_t> data);

  friend bool operator==(const SlToVlTable&, const SlToVlTable&) = default;
};

}  // namespace ibfab::mad
