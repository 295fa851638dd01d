#include "fabric/wire/sa_header.h"

namespace ibfab::wire {

void SaHeader::pack(Writer& w) const {
  w.u64(sm_key);
  w.u16(attr_offset);
  w.u16(0);
  w.u64(comp_mask);
}

std::optional<SaHeader> SaHeader::unpack(Reader& r) {
  SaHeader h;
  h.sm_key = r.u64();
  h.attr_offset = r.u16();
  r.skip(2);
  h.comp_mask = r.u64();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
