#include "fabric/wire/rmpp_header.h"

namespace ibfab::wire {

void RmppHeader::pack(Writer& w) const {
  w.u8(version);
  w.u8(type);
  w.u8(static_cast<uint8_t>((resp_time & 0x1f) << 3 | (flags & 0x7)));
  w.u8(status);
  w.u32(data1);
  w.u32(data2);
}

std::optional<RmppHeader> RmppHeader::unpack(Reader& r) {
  RmppHeader h;
  h.version = r.u8();
  h.type = r.u8();
  const uint8_t b = r.u8();
  h.resp_time = static_cast<uint8_t>(b >> 3);
  h.flags = static_cast<uint8_t>(b & 0x7);
  h.status = r.u8();
  h.data1 = r.u32();
  h.data2 = r.u32();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
