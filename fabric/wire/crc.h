#pragma once
// The two link CRCs of an IBA packet (IBTA Vol 1, 7.8).
//
// ICRC: CRC-32 (the Ethernet one: polynomial 0x04C11DB7, bit-reflected,
// preset to ones, complemented), over the packet from the first byte of the
// LRH to the byte before the ICRC, with the fields a switch or router may
// change replaced by ones:
//   local packet (LNH = 2):  LRH.VL (byte 0, bits 7:4)   and BTH.Resv8a
//   global packet (LNH = 3): the whole LRH (8 bytes), GRH.TClass,
//                            GRH.FlowLabel, GRH.HopLmt   and BTH.Resv8a
// (Linux rxe seeds its RoCE ICRC with the CRC of eight 0xff bytes for the
// same reason: the masked LRH of a global packet.)
// VCRC: CRC-16, polynomial 0x100B, bit-reflected, preset to ones,
// complemented, over the packet from the first byte of the LRH through the
// ICRC.
//
// Byte order on the wire: both CRCs are sent least significant byte first,
// as the Ethernet FCS is (and as rxe stores its ICRC).
//
// "wire" below is a whole packet as sent: LRH .. payload, pad, ICRC (4),
// VCRC (2). All functions are allocation-free and never touch memory outside
// their span; table-driven (8 bytes per step).
#include <cstddef>
#include <cstdint>
#include <span>

namespace ibfab::wire {

inline constexpr std::size_t kIcrcSize = 4;
inline constexpr std::size_t kVcrcSize = 2;

// Raw register updates (no preset, no final complement), for building other
// CRCs on top; crc32_update(0xffffffff, data) ^ 0xffffffff is the usual CRC-32.
uint32_t crc32_update(uint32_t reg, std::span<const uint8_t> data);
uint16_t crc16_update(uint16_t reg, std::span<const uint8_t> data);

// ICRC over `covered` (LRH through the byte before the ICRC). Reads LNH from
// byte 1 to choose the mask; a span shorter than its headers is masked as far
// as it goes.
uint32_t compute_icrc(std::span<const uint8_t> covered);
// VCRC over `covered` (LRH through the ICRC).
uint16_t compute_vcrc(std::span<const uint8_t> covered);

inline void store_icrc(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
inline uint32_t load_icrc(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline void store_vcrc(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline uint16_t load_vcrc(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// Computes and stores both CRCs into the last 6 bytes of `wire`.
// Precondition: wire.size() >= 6 (shorter spans are left untouched).
void seal_crcs(std::span<uint8_t> wire);
// Recomputes only the VCRC, for a switch that changed a variant field (VL).
void reseal_vcrc(std::span<uint8_t> wire);
bool icrc_ok(std::span<const uint8_t> wire);
bool vcrc_ok(std::span<const uint8_t> wire);

}  // namespace ibfab::wire
