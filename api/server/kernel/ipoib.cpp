#include "api/server/kernel/ipoib.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include "api/server/kernel/multicast.h"
#include "fabric/model/fabric.h"

namespace ibfab::api {
namespace {

namespace mcm = mad::mcm_comp;

// The broadcast join is retried with a backoff doubling from 1 s to 16 s.
constexpr sim::Time kFirstBackoff = sim::Time::s(1);
constexpr unsigned kMaxShift = 4;

uint16_t full_member_pkey(const fabric::Port& p) {
  return p.pkeys.empty() ? 0xFFFF : static_cast<uint16_t>(p.pkeys[0] | 0x8000);
}

}  // namespace

wire::Gid Ipoib::broadcast_mgid(const fabric::Port& port) {
  constexpr std::array<uint8_t, 16> kLinkLocalBroadcast{0xFF, 0x12, 0x40, 0x1B, 0, 0, 0, 0,
                                                        0,    0,    0,    0,    0xFF, 0xFF, 0xFF, 0xFF};
  wire::Gid g;
  g.raw = kLinkLocalBroadcast;
  const uint16_t pkey = full_member_pkey(port);
  g.raw[4] = static_cast<uint8_t>(pkey >> 8);
  g.raw[5] = static_cast<uint8_t>(pkey);
  return g;
}

Ipoib::~Ipoib() { hca_.fabric().sim().cancel(retry_); }

void Ipoib::join() {
  const fabric::Port& p = hca_.port(port_);
  if (member_ || p.state() != fabric::PortState::Active) return;
  mad::McMemberRecord rec;
  rec.mgid = broadcast_mgid(p);
  rec.p_key = full_member_pkey(p);
  rec.join_state = mad::join_state::kFull;
  member_ = mcast_.join(rec, mcm::kMgid | mcm::kPortGid | mcm::kPKey | mcm::kJoinState,
                        [this](int status, const mad::McMemberRecord&) {
                          if (status == 0) {
                            joined_ = true;
                            failures_ = 0;
                            return;
                          }
                          member_ = 0;
                          joined_ = false;
                          if (status == -ENETRESET) return;  // the port event joins again
                          const sim::Time backoff = kFirstBackoff * (int64_t{1} << std::min(failures_, kMaxShift));
                          ++failures_;
                          retry_ = hca_.fabric().sim().schedule(backoff, [this] { join(); });
                        });
}

void Ipoib::restart() {
  hca_.fabric().sim().cancel(retry_);
  member_ = 0;
  joined_ = false;
  failures_ = 0;
  retry_ = hca_.fabric().sim().schedule(sim::Time::zero(), [this] { join(); });
}

const mad::McMemberRecord* Ipoib::broadcast() const {
  return joined_ ? mcast_.joined(broadcast_mgid(hca_.port(port_))) : nullptr;
}

bool Ipoib::settled() const {
  return hca_.port(port_).state() != fabric::PortState::Active || joined_ || failures_ >= 2;
}

}  // namespace ibfab::api
