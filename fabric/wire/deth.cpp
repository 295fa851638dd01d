#include "fabric/wire/deth.h"

namespace ibfab::wire {

void Deth::pack(Writer& w) const {
  w.u32(qkey);
  w.u8(0);
  w.u24(src_qp & 0xffffff);
}

std::optional<Deth> Deth::unpack(Reader& r) {
  Deth h;
  h.qkey = r.u32();
  r.skip(1);
  h.src_qp = r.u24();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
