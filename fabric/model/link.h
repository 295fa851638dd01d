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
  // DETH 8, immediate 4, ICRC 4, VCRC 2, and 3 bytes of pad.
  static constexpr uint32_t kHeaderAllowance = 81;

  Link(uint32_t id, Port* a, Port* b, LinkRate rate, sim::Time propagation, uint64_t seed)
      : id_(id), end_{a, b}, rate_(rate), propagation_(propagation), seed_(seed) {}

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
  uint32_t mtu_ = 4096;
  bool up_ = true;
  double loss_ = 0.0;
  // The last size carry() timed and its serialisation: most packets on a
  // link are of a few sizes (every SMP is 290 bytes), and the division
  // behind LinkRate::serialisation is the costly part of a hop.
  mutable uint32_t timed_bytes_ = 0;
  mutable sim::Time timed_serialisation_ = sim::Time::zero();
};

}  // namespace ibfab::fabric
