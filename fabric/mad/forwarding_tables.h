#pragma once
// Switch forwarding-table blocks (IBTA 1.3 vol 1, 14.2.5.10 and 14.2.5.12).
//
// LinearForwardingTable (0x0019): AttributeModifier = block; 64 one-byte
// egress ports, entry i of block b is unicast LID 64*b + i.
//
// MulticastForwardingTable (0x001B): AttributeModifier = position << 28 |
// block (block 0..511, position 0..15); 32 big-endian uint16 port masks.
// Entry i of block b is MLID 0xC000 + 32*b + i; bit j of a mask at position
// p stands for port 16*p + j.
#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace ibfab::mad {

struct LinearForwardingTable {
  static constexpr uint16_t kAttributeId = 0x0019;
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kEntriesPerBlock = 64;
  // Egress port value meaning "no route": the switch drops the packet.
  static constexpr uint8_t kNoPort = 0xFF;

  std::array<uint8_t, kEntriesPerBlock> port{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; entries past a short span read as zero.
  static LinearForwardingTable unpack(std::span<const uint8_t> data);

  friend bool operator==(const LinearForwardingTable&, const LinearForwardingTable&) = default;
};

// Block and entry index of a unicast LID in the LFT.
constexpr uint16_t lft_block_of(uint16_t lid) { return static_cast<uint16_t>(lid / 64); }
constexpr uint8_t lft_index_of(uint16_t lid) { return static_cast<uint8_t>(lid % 64); }

struct MulticastForwardingTable {
  static constexpr uint16_t kAttributeId = 0x001B;
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kEntriesPerBlock = 32;
  static constexpr uint16_t kMaxBlock = 511;
  static constexpr uint8_t kMaxPosition = 15;
  static constexpr uint16_t kMulticastLidBase = 0xC000;

  std::array<uint16_t, kEntriesPerBlock> port_mask{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; entries past a short span read as zero.
  static MulticastForwardingTable unpack(std::span<const uint8_t> data);

  friend bool operator==(const MulticastForwardingTable&, const MulticastForwardingTable&) = default;
};

// AttributeModifier of an MFT block.
struct MftAddress {
  uint16_t block = 0;    // 0..511
  uint8_t position = 0;  // 0..15: ports 16*position .. 16*position + 15
  friend bool operator==(const MftAddress&, const MftAddress&) = default;
};

// Out-of-range block or position bits are masked off (block to 9 bits,
// position to 4).
constexpr uint32_t mft_attribute_modifier(MftAddress a) {
  return (uint32_t{a.position} & 0xF) << 28 | (uint32_t{a.block} & 0x1FF);
}
// Reserved bits 27:9 are ignored.
constexpr MftAddress mft_decode_modifier(uint32_t modifier) {
  return MftAddress{static_cast<uint16_t>(modifier & 0x1FF),
                    static_cast<uint8_t>(modifier >> 28)};
}

// Where an MLID lives in the MFT.
struct MftSlot {
  uint16_t block = 0;  // 0..511
  uint8_t index = 0;   // 0..31, into MulticastForwardingTable::port_mask
  friend bool operator==(const MftSlot&, const MftSlot&) = default;
};

// nullopt for a LID below 0xC000 (not multicast). 0xFFFF (the permissive
// LID) maps to block 511 index 31, as the table layout implies.
constexpr std::optional<MftSlot> mft_slot_of(uint16_t mlid) {
  if (mlid < MulticastForwardingTable::kMulticastLidBase) return std::nullopt;
  const unsigned offset = mlid - MulticastForwardingTable::kMulticastLidBase;
  return MftSlot{static_cast<uint16_t>(offset / 32), static_cast<uint8_t>(offset % 32)};
}
constexpr uint16_t mlid_of(MftSlot s) {
  return static_cast<uint16_t>(MulticastForwardingTable::kMulticastLidBase + 32u * s.block +
                               s.index);
}

// Which mask (position) and bit carry a port.
constexpr uint8_t mft_position_of(uint8_t port) { return static_cast<uint8_t>(port / 16); }
constexpr uint16_t mft_bit_of(uint8_t port) { return static_cast<uint16_t>(1u << (port % 16)); }

}  // namespace ibfab::mad
