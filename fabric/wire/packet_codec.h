#pragma once
// Whole IBA packets: LRH [GRH] BTH [extension headers] payload pad ICRC VCRC.
//
// The extension headers follow the BTH in the IBTA order (Vol 1, 9.2-9.3):
// RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH;
// BTH.OpCode says which are present (opcode_layout). The codec packs and
// parses all of them but the RDETH (RD is not modelled; its packets parse,
// without their RDETH, but cannot be packed). XRCETH is one reserved byte and
// the 24-bit XRC SRQ number; ImmDt and IETH (the R_Key to invalidate) are one
// 32-bit word each.
//
// pack_packet() fills the derived fields itself (LRH.LNH, LRH.PktLen,
// GRH.PayLen, BTH.PadCnt, the pad bytes, both CRCs). parse_packet() is its
// inverse and validates everything a receiving port checks. Both are
// allocation-free and never touch memory outside their spans; ParsedPacket
// refers into the parsed buffer, which must outlive it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/wire/aeth.h"
#include "fabric/wire/atomic_ack_eth.h"
#include "fabric/wire/atomic_eth.h"
#include "fabric/wire/bth.h"
#include "fabric/wire/crc.h"
#include "fabric/wire/deth.h"
#include "fabric/wire/grh.h"
#include "fabric/wire/lrh.h"
#include "fabric/wire/mad_view.h"
#include "fabric/wire/reth.h"

namespace ibfab::wire {

// The smallest packet: LRH, BTH, ICRC, VCRC.
inline constexpr std::size_t kMinPacketSize = 8 + 12 + 4 + 2;
// LRH.PktLen is 11 bits of 4-byte words, plus the VCRC.
inline constexpr std::size_t kMaxPacketSize = 0x7ff * 4 + 2;

struct PacketSpec {
  Lrh lrh;                   // lnh and pkt_len are overwritten
  std::optional<Grh> grh;    // pay_len is overwritten
  Bth bth;                   // pad_count is overwritten
  std::optional<Deth> deth;
  std::optional<uint32_t> xrc_srqn;  // XRCETH, 24 bits
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomic_eth;
  std::optional<Aeth> aeth;
  std::optional<AtomicAckEth> atomic_ack_eth;
  std::optional<uint32_t> immediate;        // ImmDt
  std::optional<uint32_t> invalidate_rkey;  // IETH
  std::span<const uint8_t> payload;
};

// Packs `spec` into `out` and returns the packet's size, or 0 when `out` is
// too small, the packet would exceed kMaxPacketSize, BTH.OpCode is reserved
// or RD, or the extension headers present in `spec` are not exactly those
// the opcode carries.
std::size_t pack_packet(std::span<uint8_t> out, const PacketSpec& spec);
// The same, but with the ICRC and VCRC bytes left zero, for a producer that
// computes them only when the packet is observed (seal_crcs).
std::size_t pack_packet_unsealed(std::span<uint8_t> out, const PacketSpec& spec);
// pack_packet_unsealed() for a payload of `payload_size` bytes that the
// caller writes afterwards, in place, at `payload` (a span into `out`, set
// on success; its bytes are left as they were): a producer that reads the
// payload from host memory straight into the packet. spec.payload must be
// empty.
std::size_t pack_packet_in_place(std::span<uint8_t> out, const PacketSpec& spec, std::size_t payload_size,
                                 std::span<uint8_t>& payload);

// The wire size pack_packet() would produce for a payload of `payload_size`
// bytes (no validation).
inline std::size_t packet_size(bool has_grh, const OpcodeLayout& layout, std::size_t payload_size) {
  return Lrh::kSize + (has_grh ? Grh::kSize : 0) + Bth::kSize + layout.ext_size() + payload_size +
         (4 - payload_size % 4) % 4 + kIcrcSize + kVcrcSize;
}

enum class PacketError : uint8_t {
  kNone = 0,
  kTooShort,           // fewer bytes than LRH + BTH + ICRC + VCRC
  kBadLinkVersion,     // LRH.LVer != 0
  kUnsupportedLnh,     // raw or IPv6-raw packet
  kBadPktLen,          // LRH.PktLen * 4 + 2 != buffer size
  kBadGrh,             // IPVer != 6, NxtHdr != 0x1B, or PayLen inconsistent
  kBadOpcode,          // reserved or manufacturer-specific OpCode
  kTruncatedHeaders,   // the packet ends inside the opcode's headers
  kBadPadCount,        // more pad bytes than payload bytes
  kIcrcMismatch,
  kVcrcMismatch,
};
const char* to_string(PacketError e);

struct ParsedPacket {
  PacketError error = PacketError::kTooShort;

  Lrh lrh;
  std::optional<Grh> grh;
  Bth bth;
  OpcodeLayout layout;
  std::optional<Deth> deth;
  std::optional<uint32_t> xrc_srqn;
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomic_eth;
  std::optional<Aeth> aeth;
  std::optional<AtomicAckEth> atomic_ack_eth;
  std::optional<uint32_t> immediate;
  std::optional<uint32_t> invalidate_rkey;
  uint32_t icrc = 0;
  uint16_t vcrc = 0;

  // Offsets into the buffer; meaningful only for headers that are present.
  std::size_t grh_offset = 0;
  std::size_t bth_offset = 0;
  std::size_t deth_offset = 0;
  std::size_t xrceth_offset = 0;
  std::size_t reth_offset = 0;
  std::size_t atomic_eth_offset = 0;
  std::size_t aeth_offset = 0;
  std::size_t atomic_ack_eth_offset = 0;
  std::size_t immediate_offset = 0;
  std::size_t ieth_offset = 0;
  std::size_t payload_offset = 0;
  std::span<const uint8_t> payload;  // without the pad bytes
  std::size_t size = 0;              // the whole packet, through the VCRC

  bool ok() const { return error == PacketError::kNone; }
  const char* message() const { return to_string(error); }
};

// Parses and validates one packet occupying exactly `wire`. With
// check_crcs = false the CRCs are read but not verified (for a simulator
// that produced the packet itself). On error, the fields decoded before the
// failing check are filled in; the rest keep their defaults.
ParsedPacket parse_packet(std::span<const uint8_t> wire, bool check_crcs = true);

// Overwrites LRH.VL in place and reseals the VCRC (the ICRC does not cover
// VL). Precondition: wire is a packet of at least kMinPacketSize bytes.
void set_vl(std::span<uint8_t> wire, uint8_t vl);

}  // namespace ibfab::wire
