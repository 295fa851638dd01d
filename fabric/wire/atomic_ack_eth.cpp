#include "fabric/wire/atomic_ack_eth.h"

namespace ibfab::wire {

void AtomicAckEth::pack(Writer& w) const { w.u64(original); }

std::optional<AtomicAckEth> AtomicAckEth::unpack(Reader& r) {
  AtomicAckEth h;
  h.original = r.u64();
  if (!r.ok()) return std::nullopt;
  return h;
}

}  // namespace ibfab::wire
