#pragma once
// ipoib (drivers/infiniband/ulp/ipoib) for one HCA port, as far as rdma_cm
// needs it: the port's membership of its partition's IPoIB broadcast group.
//
// - join() joins the group (JoinState 0x1; mask MGID, PortGID, P_Key,
//   JoinState, as ipoib does) when the port is Active and neither holds
//   nor asks for it yet. A join the SA does not grant is asked again after
//   a backoff doubling from 1 s to 16 s; one ended by -ENETRESET is not
//   (the port event that caused it calls restart()).
// - restart() is what a port event that reset the port's multicast module
//   does: the membership is forgotten and joined again from a zero-delay
//   event.
// - broadcast() is the group's record while the port holds it: rdma_cm
//   copies its SL, flow label and traffic class (and, for RDMA_PS_IPOIB,
//   its Q_Key) into every join, and refuses joins without it.
// It reaches the SA only through the port's PortMulticast.
#include <cstdint>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/model/hca.h"
#include "fabric/wire/gid.h"
#include "sim/event_handle.h"

namespace ibfab::api {

class PortMulticast;

class Ipoib {
 public:
  Ipoib(fabric::Hca& hca, uint8_t port, PortMulticast& mcast) : hca_(hca), port_(port), mcast_(mcast) {}
  ~Ipoib();
  Ipoib(const Ipoib&) = delete;
  Ipoib& operator=(const Ipoib&) = delete;

  void join();
  void restart();
  const mad::McMemberRecord* broadcast() const;
  // The port is not Active, or holds the group, or has been refused twice.
  bool settled() const;

  // The partition's broadcast MGID (RFC 4391): ff12:401b:PPPP::ffff:ffff,
  // link-local scope, P the port's first P_Key as a full member.
  static wire::Gid broadcast_mgid(const fabric::Port& port);

 private:
  fabric::Hca& hca_;
  uint8_t port_;
  PortMulticast& mcast_;
  uint64_t member_ = 0;  // the broadcast membership (0: none)
  bool joined_ = false;
  unsigned failures_ = 0;
  sim::EventHandle retry_;
};

}  // namespace ibfab::api
