#pragma once
// A link joins two ports. carry() is a pure function of (packet, time): it
// decides whether the packet is lost and how long it takes, and changes
// nothing; the fabric applies the result. Loss is decided by hashing
// (link seed, packet id), so a run is reproducible packet for packet.
#include <cstdint>

#include "fabric/model/drop_reason.h"
#include "fabric/model/link_rate.h"
#include "sim/time.h"

namespace ibfab::fabric {

class Port;


struct Transit {
  DropReason drop = DropReason::None;
  sim::Time serialisation;
  sim::Time propagation;
  bool dropped() const { return drop != DropReason::None; }
};

class Link {
 public:
  // Wire bytes a packet may have beyond the MTU: LRH 8, GRH 40, BTH 12,
  // the largest extension headers a packet with payload carries (RETH 16
  // and ImmDt 4: RDMA WRITE Only with Immediate), ICRC 4, VCRC 2, and 3
  // bytes of pad.
  static constexpr uint32_t kHeaderAllowance = 89;

  Link(uint32_t id, Port* a, Port* b, LinkRate rate, sim::Time propagation, uint64_t seed)
      : id_(id), end_{a, b}, rate_(rate), propagation_(propagation), seed_(seed),
        ps_per_byte_(exact_ps_per_byte(rate)) {}

  Transit carry(uint64_t packet_id, uint32_t bytes, sim::Time now) const;

  uint32_t id() const { return id_; }
  Port* end(int side) const { return end_[side]; }
  Port* peer_of(const Port* p) const { return end_[0] == p ? end_[1] : end_[0]; }
  LinkRate rate() const { return rate_; }
  sim::Time propagation() const { return propagation_; }
  uint32_t mtu() const { return mtu_; }
  bool up() const { return up_; }
  double loss() const { return loss_; }

  void set_up(bool up) { up_ = up; }
  void set_loss(double p) { loss_ = p < 0 ? 0 : (p > 1 ? 1 : p); }
  void set_mtu(uint32_t bytes) { mtu_ = bytes; }

 private:
  uint32_t id_;
  Port* end_[2];
  LinkRate rate_;
  sim::Time propagation_;
  uint64_t seed_;
  // A byte's time on the wire when it is a whole number of picoseconds (every
  // IBTA rate but FDR's): serialisation is then one multiplication, with
  // the same result as LinkRate::serialisation. 0 otherwise.
  static uint64_t exact_ps_per_byte(LinkRate rate) {
    const uint64_t bps = rate.data_bps();
    return bps && 8'000'000'000'000ull % bps == 0 ? 8'000'000'000'000ull / bps : 0;
  }

  uint64_t ps_per_byte_;
  uint32_t mtu_ = 4096;
  bool up_ = true;
  double loss_ = 0.0;
};

}  // namespace ibfab::fabric
