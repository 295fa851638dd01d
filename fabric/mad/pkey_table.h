#pragma once
// P_KeyTable (SMP attribute 0x0016, IBTA 1.3 vol 1, 14.2.5.7): one block of
// 32 big-endian P_Keys. AttributeModifier: block (bits 15:0); on a switch,
// bits 31:16 carry the port number (the table is per port). CAs ignore
// bits 31:16.
#include <array>
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct PKeyTable {
  static constexpr uint16_t kAttributeId = 0x0016;
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kEntriesPerBlock = 32;
  // Bit 15 of a P_Key: 1 = full member, 0 = limited member.
  static constexpr uint16_t kFullMemberBit = 0x8000;
  static constexpr uint16_t kBaseMask = 0x7FFF;
  static constexpr uint16_t kDefaultPKey = 0xFFFF;
  static constexpr uint16_t kInvalidPKey = 0x0000;

  std::array<uint16_t, kEntriesPerBlock> p_key{};

  // The IBTA rule for two P_Keys (10.9.3): the same base, not the invalid
  // one, and at least one of them a full member's.
  static constexpr bool matches(uint16_t a, uint16_t b) {
    return (a & kBaseMask) != 0 && (a & kBaseMask) == (b & kBaseMask) && ((a | b) & kFullMemberBit) != 0;
  }

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; entries past a short span read as zero.
  static PKeyTable unpack(std::span<const uint8_t> data);

  friend bool operator==(const PKeyTable&, const PKeyTable&) = default;
};

struct PKeyTableAddress {
  uint16_t block = 0;
  uint8_t port = 0;  // switches only; 0 for CAs
  friend bool operator==(const PKeyTableAddress&, const PKeyTableAddress&) = default;
};

constexpr uint32_t pkey_table_modifier(PKeyTableAddress a) {
  return uint32_t{a.port} << 16 | a.block;
}
// Bits 31:24 are reserved and ignored (port numbers fit in 8 bits).
constexpr PKeyTableAddress pkey_table_decode_modifier(uint32_t modifier) {
  return PKeyTableAddress{static_cast<uint16_t>(modifier & 0xFFFF),
                          static_cast<uint8_t>(modifier >> 16)};
}

}  // namespace ibfab::mad
