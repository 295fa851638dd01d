#pragma once
// Directed-route SMP (management class 0x81) field access over the 256-byte
// MAD, IBTA 1.3 vol 1, 14.2.1.2:
//   1 MgmtClass  3 Method  4-5 D bit 15 | Status 14:0  6 HopPointer  7 HopCount
//  16 AttributeID  20 AttributeModifier  24 M_Key  32 DrSLID  34 DrDLID
//  64 data (64 bytes)  128 InitialPath[0..63]  192 ReturnPath[0..63]
// Path entry 0 is unused; hop i of a path is entry i (1..HopCount).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/smp.h"

namespace ibfab::mad {

using SmpBuffer = std::span<uint8_t, 256>;
using ConstSmpBuffer = std::span<const uint8_t, 256>;

namespace dr_smp {

inline constexpr std::size_t kSize = 256;
inline constexpr std::size_t kMgmtClassOffset = 1;
inline constexpr std::size_t kMethodOffset = 3;
inline constexpr std::size_t kStatusOffset = wire::SmpLayout::kStatusOffset;
inline constexpr std::size_t kHopPointerOffset = wire::SmpLayout::kHopPointerOffset;
inline constexpr std::size_t kHopCountOffset = wire::SmpLayout::kHopCountOffset;
inline constexpr std::size_t kTransactionIdOffset = 8;
inline constexpr std::size_t kAttributeIdOffset = 16;
inline constexpr std::size_t kAttributeModifierOffset = 20;
inline constexpr std::size_t kMKeyOffset = wire::SmpLayout::kMKeyOffset;
inline constexpr std::size_t kDrSlidOffset = wire::SmpLayout::kDrSlidOffset;
inline constexpr std::size_t kDrDlidOffset = wire::SmpLayout::kDrDlidOffset;
inline constexpr std::size_t kDataOffset = wire::SmpLayout::kDataOffset;
inline constexpr std::size_t kDataSize = wire::SmpLayout::kDataSize;
inline constexpr std::size_t kInitialPathOffset = wire::SmpLayout::kInitialPathOffset;
inline constexpr std::size_t kReturnPathOffset = wire::SmpLayout::kReturnPathOffset;

inline constexpr uint8_t kClassLidRouted = 0x01;
inline constexpr uint8_t kClassDirectedRoute = 0x81;
inline constexpr uint8_t kMethodGet = 0x01;
inline constexpr uint8_t kMethodSet = 0x02;
inline constexpr uint8_t kMethodGetResp = 0x81;
inline constexpr uint8_t kMethodTrap = 0x05;
inline constexpr uint8_t kMethodTrapRepress = 0x07;

inline constexpr uint16_t kPermissiveLid = 0xFFFF;
inline constexpr uint16_t kDirectionBit = wire::SmpLayout::kDirectionBit;
// HopCount is 0..63 (C14-6); a path has 64 entries, entry 0 unused.
inline constexpr uint8_t kMaxHops = wire::SmpLayout::kMaxHops;

// D = 1: the SMP is returning (a response); 0: outbound.
inline bool direction(ConstSmpBuffer s) {
  return (wire::load_be16(&s[kStatusOffset]) & kDirectionBit) != 0;
}
inline uint16_t status(ConstSmpBuffer s) {
  return static_cast<uint16_t>(wire::load_be16(&s[kStatusOffset]) & ~kDirectionBit);
}
inline uint8_t hop_pointer(ConstSmpBuffer s) { return s[kHopPointerOffset]; }
inline uint8_t hop_count(ConstSmpBuffer s) { return s[kHopCountOffset]; }
inline uint16_t dr_slid(ConstSmpBuffer s) { return wire::load_be16(&s[kDrSlidOffset]); }
inline uint16_t dr_dlid(ConstSmpBuffer s) { return wire::load_be16(&s[kDrDlidOffset]); }
// i in 0..63.
inline uint8_t initial_path(ConstSmpBuffer s, std::size_t i) { return s[kInitialPathOffset + i]; }
inline uint8_t return_path(ConstSmpBuffer s, std::size_t i) { return s[kReturnPathOffset + i]; }

inline void set_direction(SmpBuffer s, bool returning) {
  const uint16_t st = wire::load_be16(&s[kStatusOffset]);
  wire::store_be16(&s[kStatusOffset], static_cast<uint16_t>(returning ? st | kDirectionBit
                                                                      : st & ~kDirectionBit));
}
// Keeps the D bit; `value` is the low 15 bits.
inline void set_status(SmpBuffer s, uint16_t value) {
  const uint16_t d = wire::load_be16(&s[kStatusOffset]) & kDirectionBit;
  wire::store_be16(&s[kStatusOffset], static_cast<uint16_t>(d | (value & ~kDirectionBit)));
}
inline void set_hop_pointer(SmpBuffer s, uint8_t v) { s[kHopPointerOffset] = v; }
inline void set_hop_count(SmpBuffer s, uint8_t v) { s[kHopCountOffset] = v; }
inline void set_dr_slid(SmpBuffer s, uint16_t v) { wire::store_be16(&s[kDrSlidOffset], v); }
inline void set_dr_dlid(SmpBuffer s, uint16_t v) { wire::store_be16(&s[kDrDlidOffset], v); }
inline void set_initial_path(SmpBuffer s, std::size_t i, uint8_t port) {
  s[kInitialPathOffset + i] = port;
}
inline void set_return_path(SmpBuffer s, std::size_t i, uint8_t port) {
  s[kReturnPathOffset + i] = port;
}

// A fresh outbound DR request: zeroes the buffer, then sets BaseVersion 1,
// class 0x81, ClassVersion 1, method, TID, attribute, HopPointer 0,
// HopCount = hops.size(), InitialPath[1..] = hops, DrSLID and DrDLID.
// Precondition: hops.size() <= kMaxHops.
struct DrRequest {
  uint8_t method = kMethodGet;
  uint64_t transaction_id = 0;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;
  uint64_t m_key = 0;
  uint16_t dr_slid = kPermissiveLid;
  uint16_t dr_dlid = kPermissiveLid;
};
void init_request(SmpBuffer s, const DrRequest& r, std::span<const uint8_t> hops);

}  // namespace dr_smp
}  // namespace ibfab::mad
