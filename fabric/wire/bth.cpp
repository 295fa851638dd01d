#include "fabric/wire/bth.h"

namespace ibfab::wire {

OpcodeLayout opcode_layout(uint8_t op) {
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

void Bth::pack(Writer& w) const {
  w.u8(opcode);
  w.u8(static_cast<uint8_t>((solicited_event ? 0x80 : 0) | (mig_req ? 0x40 : 0) |
                            (pad_count & 0x3) << 4 | (tver & 0xf)));
  w.u16(pkey);
  w.u8(static_cast<uint8_t>((fecn ? 0x80 : 0) | (becn ? 0x40 : 0)));
  w.u24(dest_qp & kMaxQpn);
  w.u8(ack_req ? 0x80 : 0);
  w.u24(psn & kMaxPsn);
}

std::optional<Bth> Bth::unpack(Reader& r) {
  Bth h;
  h.opcode = r.u8();
  const uint8_t b1 = r.u8();
  h.solicited_event = (b1 & 0x80) != 0;
  h.mig_req = (b1 & 0x40) != 0;
  h.pad_count = static_cast<uint8_t>(b1 >> 4 & 0x3);
  h.tver = static_cast<uint8_t>(b1 & 0xf);
  h.pkey = r.u16();
  const uint8_t b4 = r.u8();
  h.fecn = (b4 & 0x80) != 0;
  h.becn = (b4 & 0x40) != 0;
  h.dest_qp = r.u24();
  h.ack_req = (r.u8() & 0x80) != 0;
  h.psn = r.u24();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
