#include "fabric/wire/atomic_eth.h"

namespace ibfab::wire {

void AtomicEth::pack(Writer& w) const {
  w.u64(va);
  w.u32(rkey);
  w.u64(swap_add);
  w.u64(compare);
}

std::optional<AtomicEth> AtomicEth::unpack(Reader& r) {
  AtomicEth h;
  h.va = r.u64();
  h.rkey = r.u32();
  h.swap_add = r.u64();
  h.compare = r.u64();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
