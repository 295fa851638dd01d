#pragma once
// Base Transport Header (IBTA Vol 1, 9.2): 12 bytes.
//
//   byte 0   OpCode
//   byte 1   SE(7)  M(6)  PadCnt(5:4)  TVer(3:0)
//   2..3     P_Key
//   byte 4   FECN(7)  BECN(6)  reserved(5:0)   (the "Resv8a" byte: variant,
//                                               masked to ones in the ICRC)
//   5..7     DestQP
//   byte 8   AckReq(7)  reserved(6:0)
//   9..11    PSN
//
// Reserved bits are packed as zero and ignored when unpacked.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

// OpCode values: transport in bits 7:5, operation in bits 4:0.
namespace opcode {
inline constexpr uint8_t kTransportMask = 0xe0;
inline constexpr uint8_t kRc = 0x00;
inline constexpr uint8_t kUc = 0x20;
inline constexpr uint8_t kRd = 0x40;
inline constexpr uint8_t kUd = 0x60;
inline constexpr uint8_t kCnp = 0x80;
inline constexpr uint8_t kXrc = 0xa0;

inline constexpr uint8_t kSendFirst = 0x00;
inline constexpr uint8_t kSendMiddle = 0x01;
inline constexpr uint8_t kSendLast = 0x02;
inline constexpr uint8_t kSendLastWithImmediate = 0x03;
inline constexpr uint8_t kSendOnly = 0x04;
inline constexpr uint8_t kSendOnlyWithImmediate = 0x05;
inline constexpr uint8_t kRdmaWriteFirst = 0x06;
inline constexpr uint8_t kRdmaWriteMiddle = 0x07;
inline constexpr uint8_t kRdmaWriteLast = 0x08;
inline constexpr uint8_t kRdmaWriteLastWithImmediate = 0x09;
inline constexpr uint8_t kRdmaWriteOnly = 0x0a;
inline constexpr uint8_t kRdmaWriteOnlyWithImmediate = 0x0b;
inline constexpr uint8_t kRdmaReadRequest = 0x0c;
inline constexpr uint8_t kRdmaReadResponseFirst = 0x0d;
inline constexpr uint8_t kRdmaReadResponseMiddle = 0x0e;
inline constexpr uint8_t kRdmaReadResponseLast = 0x0f;
inline constexpr uint8_t kRdmaReadResponseOnly = 0x10;
inline constexpr uint8_t kAcknowledge = 0x11;
inline constexpr uint8_t kAtomicAcknowledge = 0x12;
inline constexpr uint8_t kCompareSwap = 0x13;
inline constexpr uint8_t kFetchAdd = 0x14;
inline constexpr uint8_t kSendLastWithInvalidate = 0x16;
inline constexpr uint8_t kSendOnlyWithInvalidate = 0x17;

inline constexpr uint8_t kRcSendOnly = kRc | kSendOnly;                          // 0x04
inline constexpr uint8_t kRcSendOnlyWithImmediate = kRc | kSendOnlyWithImmediate;  // 0x05
inline constexpr uint8_t kRcAcknowledge = kRc | kAcknowledge;                    // 0x11
inline constexpr uint8_t kUcSendOnly = kUc | kSendOnly;                          // 0x24
inline constexpr uint8_t kUdSendOnly = kUd | kSendOnly;                          // 0x64
inline constexpr uint8_t kUdSendOnlyWithImmediate = kUd | kSendOnlyWithImmediate;  // 0x65
inline constexpr uint8_t kCnpOpcode = kCnp;                                      // 0x80
}  // namespace opcode

// The extension headers that follow the BTH for one OpCode, in wire order
// (RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH).
struct OpcodeLayout {
  bool valid = false;  // false: reserved or manufacturer-specific opcode
  bool rdeth = false;  // 4 bytes
  bool deth = false;   // 8 bytes
  bool xrceth = false; // 4 bytes
  bool reth = false;   // 16 bytes
  bool atomic_eth = false;      // 28 bytes
  bool aeth = false;            // 4 bytes
  bool atomic_ack_eth = false;  // 8 bytes
  bool immediate = false;       // 4 bytes
  bool ieth = false;            // 4 bytes

  // Bytes from the end of the BTH to each header (meaningful when present).
  constexpr std::size_t before_deth() const { return rdeth ? 4u : 0u; }
  constexpr std::size_t before_xrceth() const { return before_deth() + (deth ? 8u : 0u); }
  constexpr std::size_t before_reth() const { return before_xrceth() + (xrceth ? 4u : 0u); }
  constexpr std::size_t before_atomic_eth() const { return before_reth() + (reth ? 16u : 0u); }
  constexpr std::size_t before_aeth() const { return before_atomic_eth() + (atomic_eth ? 28u : 0u); }
  constexpr std::size_t before_atomic_ack_eth() const { return before_aeth() + (aeth ? 4u : 0u); }
  constexpr std::size_t before_immediate() const { return before_atomic_ack_eth() + (atomic_ack_eth ? 8u : 0u); }
  constexpr std::size_t before_ieth() const { return before_immediate() + (immediate ? 4u : 0u); }
  // Total bytes of extension headers (not counting the BTH).
  constexpr std::size_t ext_size() const {
    return (rdeth ? 4u : 0u) + (deth ? 8u : 0u) + (xrceth ? 4u : 0u) + (reth ? 16u : 0u) + (atomic_eth ? 28u : 0u) +
           (aeth ? 4u : 0u) + (atomic_ack_eth ? 8u : 0u) + (immediate ? 4u : 0u) + (ieth ? 4u : 0u);
  }
};

namespace detail {
constexpr OpcodeLayout compute_opcode_layout(uint8_t op) {
  OpcodeLayout l;
  const uint8_t transport = op & opcode::kTransportMask;
  const uint8_t oper = op & static_cast<uint8_t>(~opcode::kTransportMask);

  if (transport == opcode::kCnp) {
    l.valid = (op == opcode::kCnpOpcode);
    return l;
  }
  if (transport == opcode::kUd) {
    l.valid = (oper == opcode::kSendOnly || oper == opcode::kSendOnlyWithImmediate);
    l.deth = l.valid;
    l.immediate = (oper == opcode::kSendOnlyWithImmediate);
    return l;
  }
  if (transport != opcode::kRc && transport != opcode::kUc && transport != opcode::kRd &&
      transport != opcode::kXrc)
    return l;  // manufacturer-specific (0xc0..0xff)

  // Operations each transport carries.
  if (oper > opcode::kSendOnlyWithInvalidate || oper == 0x15) return l;
  if (transport == opcode::kUc && oper > opcode::kRdmaWriteOnlyWithImmediate) return l;
  if (transport == opcode::kRd && oper > opcode::kFetchAdd) return l;
  l.valid = true;
  l.rdeth = (transport == opcode::kRd);
  l.deth = (transport == opcode::kRd);
  l.xrceth = (transport == opcode::kXrc) &&
             !(oper >= opcode::kRdmaReadResponseFirst && oper <= opcode::kAtomicAcknowledge);

  switch (oper) {
    case opcode::kSendLastWithImmediate:
    case opcode::kSendOnlyWithImmediate:
    case opcode::kRdmaWriteLastWithImmediate:
      l.immediate = true;
      break;
    case opcode::kRdmaWriteFirst:
    case opcode::kRdmaWriteOnly:
    case opcode::kRdmaReadRequest:
      l.reth = true;
      break;
    case opcode::kRdmaWriteOnlyWithImmediate:
      l.reth = true;
      l.immediate = true;
      break;
    case opcode::kRdmaReadResponseFirst:
    case opcode::kRdmaReadResponseLast:
    case opcode::kRdmaReadResponseOnly:
    case opcode::kAcknowledge:
      l.aeth = true;
      break;
    case opcode::kAtomicAcknowledge:
      l.aeth = true;
      l.atomic_ack_eth = true;
      break;
    case opcode::kCompareSwap:
    case opcode::kFetchAdd:
      l.atomic_eth = true;
      break;
    case opcode::kSendLastWithInvalidate:
    case opcode::kSendOnlyWithInvalidate:
      l.ieth = true;
      break;
    default:
      break;
  }
  return l;
}

constexpr std::array<OpcodeLayout, 256> opcode_layouts() {
  std::array<OpcodeLayout, 256> t{};
  for (unsigned op = 0; op < 256; ++op) t[op] = compute_opcode_layout(static_cast<uint8_t>(op));
  return t;
}
inline constexpr std::array<OpcodeLayout, 256> kOpcodeLayouts = opcode_layouts();
}  // namespace detail

// The IBTA table of opcodes (Vol 1, 9.2.1 / Table 35), computed at compile
// time: one load per packet.
inline OpcodeLayout opcode_layout(uint8_t op) { return detail::kOpcodeLayouts[op]; }

struct Bth {
  static constexpr std::size_t kSize = 12;
  static constexpr std::size_t kResv8aOffset = 4;  // within the BTH
  static constexpr uint8_t kTransportVersion = 0;
  static constexpr uint16_t kDefaultPKey = 0xffff;
  static constexpr uint32_t kMaxQpn = 0xffffff;
  static constexpr uint32_t kMaxPsn = 0xffffff;

  uint8_t opcode = 0;
  bool solicited_event = false;
  bool mig_req = false;
  uint8_t pad_count = 0;  // 2 bits
  uint8_t tver = kTransportVersion;  // 4 bits
  uint16_t pkey = kDefaultPKey;
  bool fecn = false;
  bool becn = false;
  uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  uint32_t psn = 0;      // 24 bits

  void pack(Writer& w) const;
  // nullopt only if r runs out; field values are not validated here.
  static std::optional<Bth> unpack(Reader& r);

  friend bool operator==(const Bth&, const Bth&) = default;
};

}  // namespace ibfab::wire
