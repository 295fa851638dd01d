#include "fabric/wire/lrh.h"

namespace ibfab::wire {

void Lrh::pack(Writer& w) const {
  w.u8(static_cast<uint8_t>((vl & 0xf) << 4 | (lver & 0xf)));
  w.u8(static_cast<uint8_t>((sl & 0xf) << 4 | (lnh & 0x3)));
  w.u16(dlid);
  w.u16(static_cast<uint16_t>(pkt_len & kMaxPktLen));
  w.u16(slid);
}

std::optional<Lrh> Lrh::unpack(Reader& r) {
  Lrh h;
  const uint8_t b0 = r.u8();
  const uint8_t b1 = r.u8();
  h.vl = static_cast<uint8_t>(b0 >> 4);
  h.lver = static_cast<uint8_t>(b0 & 0xf);
  h.sl = static_cast<uint8_t>(b1 >> 4);
  h.lnh = static_cast<uint8_t>(b1 & 0x3);
  h.dlid = r.u16();
  h.pkt_len = static_cast<uint16_t>(r.u16() & kMaxPktLen);
  h.slid = r.u16();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
