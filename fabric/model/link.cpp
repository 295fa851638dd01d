#include "fabric/model/link.h"

#include "sim/rng.h"

namespace ibfab::fabric {

Transit Link::carry(uint64_t packet_id, uint32_t bytes, sim::Time now) const {
  (void)now;  // loss and timing are time-independent today; faults change state
  Transit t;
  if (bytes != timed_bytes_) {
    timed_bytes_ = bytes;
    timed_serialisation_ = rate_.serialisation(bytes);
  }
  t.serialisation = timed_serialisation_;
  t.propagation = propagation_;
  if (!up_) {
    t.drop = DropReason::LinkDown;
  } else if (bytes > mtu_ + kHeaderAllowance) {
    t.drop = DropReason::TooLarge;
  } else if (loss_ > 0) {
    // 53 uniform bits from a pure hash of (seed, packet id).
    const double u = static_cast<double>(sim::mix64(seed_, packet_id) >> 11) * 0x1.0p-53;
    if (u < loss_) t.drop = DropReason::Loss;
  }
  return t;
}

}  // namespace ibfab::fabric
