#include "fabric/wire/grh.h"

namespace ibfab::wire {

void Grh::pack(Writer& w) const {
  w.u32(uint32_t{ip_ver & 0xfu} << 28 | uint32_t{tclass} << 20 | (flow_label & kMaxFlowLabel));
  w.u16(pay_len);
  w.u8(nxt_hdr);
  w.u8(hop_limit);
  w.bytes(sgid.raw.data(), Gid::kSize);
  w.bytes(dgid.raw.data(), Gid::kSize);
}

std::optional<Grh> Grh::unpack(Reader& r) {
  Grh h;
  const uint32_t w0 = r.u32();
  h.ip_ver = static_cast<uint8_t>(w0 >> 28);
  h.tclass = static_cast<uint8_t>(w0 >> 20);
  h.flow_label = w0 & kMaxFlowLabel;
  h.pay_len = r.u16();
  h.nxt_hdr = r.u8();
  h.hop_limit = r.u8();
  r.bytes(h.sgid.raw.data(), Gid::kSize);
  r.bytes(h.dgid.raw.data(), Gid::kSize);
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
