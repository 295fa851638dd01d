#include "fabric/wire/reth.h"

namespace ibfab::wire {

void Reth::pack(Writer& w) const {
  w.u64(va);
  w.u32(rkey);
  w.u32(dma_length);
}

std::optional<Reth> Reth::unpack(Reader& r) {
  Reth h;
  h.va = r.u64();
  h.rkey = r.u32();
  h.dma_length = r.u32();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
