#pragma once
// P_Key comparisons the SA makes (IBTA 1.3 vol 1, 10.9.3): a P_Key's base
// is its low 15 bits (0 is invalid), bit 15 says full member.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/mad/pkey_table.h"
#include "sm/subnet.h"

namespace ibfab::sm::pkey {

inline constexpr uint16_t kBase = 0x7FFF;
inline constexpr uint16_t kFull = 0x8000;
inline constexpr uint16_t kDefault = 0xFFFF;

// Same base, not both limited members.
inline constexpr bool match(uint16_t a, uint16_t b) { return mad::PKeyTable::matches(a, b); }

// The port's table holds `p`'s base (either membership).
inline bool holds(const SubnetPort& port, uint16_t p) {
  if ((p & kBase) == 0) return false;
  return std::any_of(port.pkeys.begin(), port.pkeys.end(),
                     [&](uint16_t e) { return (e & kBase) == (p & kBase); });
}

// An entry of `a` matches an entry of `b`, or `a` and `b` are one table (a
// port shares with itself even as a limited member only, as OpenSM's
// osm_physp_share_pkey says): callers pass the tables the Subnet holds.
inline bool shared(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  if (&a == &b) return true;
  for (uint16_t x : a)
    for (uint16_t y : b)
      if (match(x, y)) return true;
  return false;
}
inline bool shared(const SubnetPort& a, const SubnetPort& b) { return shared(a.pkeys, b.pkeys); }

// The P_Key table the SA checks for a physical port: an end port's (a CA
// port, a switch's port 0) as read. The SM does not read the tables of
// switch external ports; they count as holding the default P_Key, as a
// switch that does not enforce partitions does.
inline const std::vector<uint16_t>& port_pkeys(const Subnet& s, const SubnetNode& n, uint8_t port) {
  static const std::vector<uint16_t> kDefaultOnly{kDefault};
  const uint64_t guid = n.is_switch() ? (port == 0 ? n.info.node_guid : 0)
                                      : (port < n.port_guids.size() ? n.port_guids[port] : 0);
  const SubnetPort* p = guid ? s.by_guid(guid) : nullptr;
  return p ? p->pkeys : kDefaultOnly;
}

}  // namespace ibfab::sm::pkey
