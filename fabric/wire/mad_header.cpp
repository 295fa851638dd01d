#include "fabric/wire/mad_header.h"

namespace ibfab::wire {

void MadHeader::pack(Writer& w) const {
  w.u8(base_version);
  w.u8(mgmt_class);
  w.u8(class_version);
  w.u8(method);
  w.u16(status);
  w.u16(class_specific);
  w.u64(tid);
  w.u16(attr_id);
  w.u16(0);
  w.u32(attr_mod);
}

std::optional<MadHeader> MadHeader::unpack(Reader& r) {
  MadHeader h;
  h.base_version = r.u8();
  h.mgmt_class = r.u8();
  h.class_version = r.u8();
  h.method = r.u8();
  h.status = r.u16();
  h.class_specific = r.u16();
  h.tid = r.u64();
  h.attr_id = r.u16();
  r.skip(2);
  h.attr_mod = r.u32();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
