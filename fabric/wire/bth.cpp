#include "fabric/wire/bth.h"

namespace ibfab::wire {

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
