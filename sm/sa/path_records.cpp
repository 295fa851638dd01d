#include "sm/sa/path_records.h"

#include <algorithm>
#include <optional>

#include "fabric/mad/forwarding_tables.h"
#include "fabric/model/link_rate.h"
#include "fabric/wire/mad_header.h"
#include "sm/sa/pkey_rules.h"
#include "sm/sa/sa_enums.h"

namespace ibfab::sm {
namespace {

namespace pr = mad::pr_comp;
constexpr uint64_t kLinkLocalPrefix = 0xfe80000000000000ull;

bool masked(uint64_t mask, uint64_t bits) { return (mask & bits) == bits; }

const SubnetPort* port_by_gid(const Subnet& s, const wire::Gid& gid) {
  if (gid.prefix() != s.prefix && gid.prefix() != kLinkLocalPrefix) return nullptr;
  return s.by_guid(gid.guid());
}

bool owns(const SubnetPort& p, uint16_t lid) {
  return p.lid != 0 && (lid >> p.lmc) == (p.lid >> p.lmc);
}

// The P_Key OpenSM's osm_physp_find_common_pkey picks: `a`'s entry (with
// its membership bit) of the first base, in OpenSM's key order (the
// byte-swapped base), that matches an entry of `b`.
std::optional<uint16_t> common_pkey(const SubnetPort& a, const SubnetPort& b) {
  std::optional<uint16_t> best;
  for (uint16_t x : a.pkeys) {
    if (!std::any_of(b.pkeys.begin(), b.pkeys.end(), [&](uint16_t y) { return pkey::match(x, y); }))
      continue;
    if (!best || __builtin_bswap16(static_cast<uint16_t>(x & pkey::kBase)) <
                     __builtin_bswap16(static_cast<uint16_t>(*best & pkey::kBase)))
      best = x;
  }
  return best;
}

constexpr uint8_t kRate2_5 = 2;  // what OpenSM computes for a width or speed it does not know
constexpr int kMaxHops = 64;

// ib_port_info_compute_rate: the SA rate of a port's active width and speed
// (the extended speed counts when `extended`).
uint8_t port_rate(const mad::PortInfo& pi, bool extended) {
  const auto r = fabric::LinkRate::from_port_info(pi.link_width_active, pi.link_speed_active,
                                                  extended ? pi.link_speed_ext_active : 0);
  return r ? r->sa_rate() : kRate2_5;
}

bool has_ext_speeds(const mad::PortInfo& pi) {
  return (pi.capability_mask & mad::port_cap::kIsExtendedSpeedsSupported) != 0;
}

struct Caps {
  uint8_t mtu;
  uint8_t rate;
};

// OpenSM's pr_rcv_get_path_parms walk from `src` to `dst` (whose LID is
// `dlid`) through the LFTs the SM programmed: the smallest MTUCap and rate
// of the source port, of both ports of every switch crossed and of the
// destination port. nullopt when a route is missing; `known` false when the
// view holds no routes at all (a Subnet built by hand).
std::optional<Caps> walk(const Subnet& s, const SubnetPort& src, const SubnetPort& dst,
                         uint16_t dlid, bool& known) {
  known = !s.routes.lft.empty();
  if (!known) return std::nullopt;
  const SubnetNode* sn = s.node(src.node_guid);
  const SubnetNode* dn = s.node(dst.node_guid);
  if (!sn || !dn || src.port >= sn->ports.size() || !sn->ports[src.port].known) return std::nullopt;
  const auto route = [&](const SubnetNode& n) -> int {
    if (n.routing_index < 0 || static_cast<std::size_t>(n.routing_index) >= s.routes.lft.size()) return -1;
    const auto& lft = s.routes.lft[static_cast<std::size_t>(n.routing_index)];
    const uint8_t out = dlid < lft.size() ? lft[dlid] : mad::LinearForwardingTable::kNoPort;
    return out == mad::LinearForwardingTable::kNoPort || out >= n.ports.size() ? -1 : out;
  };
  const mad::PortInfo& base = sn->ports[src.port].info;
  Caps c{base.mtu_cap, port_rate(base, has_ext_speeds(base))};
  const auto narrow = [&](const mad::PortInfo& pi, bool extended) {
    c.mtu = std::min(c.mtu, pi.mtu_cap);
    const uint8_t r = port_rate(pi, extended);
    if (sa_enum::compare_rates(c.rate, r) > 0) c.rate = r;
  };
  const SubnetNode* node = sn;
  int port = src.port;
  if (sn->is_switch() && (port = route(*sn)) < 0) return std::nullopt;
  const SubnetNode* dest_node = dn;
  int dest_port = dst.port;
  if (dn->is_switch() && (dest_port = route(*dn)) < 0) return std::nullopt;
  for (int hops = 0; !(node == dest_node && port == dest_port); ++hops) {
    const SubnetNodePort& out = node->ports[static_cast<std::size_t>(port)];
    if (out.peer_node < 0 || hops > kMaxHops) return std::nullopt;
    node = &s.nodes[static_cast<std::size_t>(out.peer_node)];
    port = out.peer_port;
    if (node == dest_node && port == dest_port) break;
    if (!node->is_switch() || static_cast<std::size_t>(port) >= node->ports.size()) return std::nullopt;
    const bool p0_ext = has_ext_speeds(node->ports[0].info);
    narrow(node->ports[static_cast<std::size_t>(port)].info, p0_ext);
    if ((port = route(*node)) < 0) return std::nullopt;
    narrow(node->ports[static_cast<std::size_t>(port)].info, p0_ext);
  }
  const mad::PortInfo& last = node->ports[static_cast<std::size_t>(port)].info;
  narrow(last, has_ext_speeds(last));
  return c;
}

bool unicast_path(const Subnet& s, const SubnetPort& src, const SubnetPort& dst,
                  const mad::PathRecord& req, uint64_t mask, uint8_t packet_life,
                  mad::PathRecord& out) {
  mad::PathRecord r;
  r.service_id = (mask & pr::kServiceId) ? req.service_id : 0;
  r.sgid = wire::Gid::from(s.prefix, src.guid);
  r.dgid = wire::Gid::from(s.prefix, dst.guid);
  r.slid = (mask & pr::kSlid) ? req.slid : src.lid;
  r.dlid = (mask & pr::kDlid) ? req.dlid : dst.lid;
  if (!owns(src, r.slid) || !owns(dst, r.dlid)) return false;
  const bool loopback = &src == &dst;
  bool known = false;
  const std::optional<Caps> caps = walk(s, src, dst, r.dlid, known);
  if (known && !caps) return false;
  const uint8_t mtu_cap = caps ? caps->mtu : std::min(src.neighbor_mtu, dst.neighbor_mtu);
  const uint8_t rate_cap = caps ? caps->rate
                                : (sa_enum::compare_rates(src.rate, dst.rate) <= 0 ? src.rate : dst.rate);
  const auto mtu_sel = masked(mask, pr::kMtuSelector | pr::kMtu)
                           ? std::optional<uint8_t>(req.mtu_selector) : std::nullopt;
  const auto rate_sel = masked(mask, pr::kRateSelector | pr::kRate)
                            ? std::optional<uint8_t>(req.rate_selector) : std::nullopt;
  const auto mtu = sa_enum::resolve(sa_enum::Kind::kMtu, mtu_sel, req.mtu, mtu_cap);
  const auto rate = sa_enum::resolve(sa_enum::Kind::kRate, rate_sel, req.rate, rate_cap);
  if (!mtu || !rate || *mtu > mtu_cap || !sa_enum::valid_mtu(*mtu)) return false;
  if (!sa_enum::valid_rate(*rate) || sa_enum::compare_rates(*rate, rate_cap) > 0) return false;
  r.mtu = *mtu;
  r.rate = *rate;
  r.packet_life_time = loopback ? 0 : packet_life;
  if (masked(mask, pr::kPacketLifeTimeSelector | pr::kPacketLifeTime) &&
      !sa_enum::satisfies(sa_enum::Kind::kMtu, r.packet_life_time, req.packet_life_time_selector,
                          req.packet_life_time))
    return false;
  if (mask & pr::kPKey) {
    if (!pkey::holds(src, req.p_key) || !pkey::holds(dst, req.p_key)) return false;
    r.p_key = req.p_key;
  } else {
    const std::optional<uint16_t> k = common_pkey(src, dst);
    if (!k) return false;
    r.p_key = *k;
  }
  r.sl = (mask & pr::kSl) ? req.sl : 0;
  r.tclass = (mask & pr::kTClass) ? req.tclass : 0;
  r.flow_label = (mask & pr::kFlowLabel) ? req.flow_label : 0;
  r.hop_limit = (mask & pr::kHopLimit) ? req.hop_limit : 0;
  r.reversible = true;
  r.mtu_selector = r.rate_selector = r.packet_life_time_selector = mad::selector::kExactly;
  out = r;
  return true;
}

}  // namespace

uint16_t path_records(const Subnet& s, const McastGroups& groups, uint32_t requester,
                      const mad::PathRecord& req, uint64_t mask, uint8_t packet_life,
                      std::vector<mad::PathRecord>& out, bool first_only) {
  out.clear();
  const uint64_t sid = mask & pr::kServiceId;
  if (sid != 0 && sid != pr::kServiceId) return wire::mad_status::kSaInsufficientComponents;
  if (requester >= s.ports.size()) return wire::mad_status::kOk;
  const SubnetPort* src = &s.ports[requester];
  if (mask & pr::kSgid) src = port_by_gid(s, req.sgid);
  else if (mask & pr::kSlid) src = s.by_lid(req.slid);
  if (!src) return wire::mad_status::kOk;

  if ((mask & pr::kDgid) && req.dgid.is_multicast()) {
    const McastGroup* g = groups.find(req.dgid);
    if (!g || !pkey::holds(s.ports[requester], g->rec.p_key)) return wire::mad_status::kOk;
    mad::PathRecord r;
    r.dgid = g->rec.mgid;
    r.sgid = wire::Gid::from(s.prefix, src->guid);
    r.dlid = g->rec.mlid;
    r.slid = src->lid;
    r.p_key = g->rec.p_key;
    r.sl = g->rec.sl;
    r.flow_label = g->rec.flow_label;
    r.tclass = g->rec.tclass;
    r.hop_limit = g->rec.hop_limit;
    r.mtu = g->rec.mtu;
    r.rate = g->rec.rate;
    r.packet_life_time = g->rec.packet_life_time;
    r.mtu_selector = r.rate_selector = r.packet_life_time_selector = mad::selector::kExactly;
    out.push_back(r);
    return wire::mad_status::kOk;
  }

  // Without a source, every port is one (OpenSM's "world" and "half"
  // cases): destinations outer, sources inner, both in OpenSM's port table
  // order (Subnet::table_key).
  std::vector<const SubnetPort*> by_guid;
  if (!(mask & (pr::kSgid | pr::kSlid)) || !(mask & (pr::kDgid | pr::kDlid))) by_guid = s.ports_in_table_order();
  const auto done = [&] { return first_only && !out.empty(); };
  // The requester must share a P_Key with both ends (and they with each
  // other, checked by unicast_path), as OpenSM's pr_rcv_get_path_parms.
  const SubnetPort& asker = s.ports[requester];
  const auto to = [&](const SubnetPort* d) {
    if (!d || !pkey::shared(asker, *d)) return;
    mad::PathRecord r;
    if (mask & (pr::kSgid | pr::kSlid)) {
      if (pkey::shared(asker, *src) && unicast_path(s, *src, *d, req, mask, packet_life, r)) out.push_back(r);
      return;
    }
    for (const SubnetPort* from : by_guid) {
      if (done()) return;
      if (pkey::shared(asker, *from) && unicast_path(s, *from, *d, req, mask, packet_life, r)) out.push_back(r);
    }
  };
  if (mask & pr::kDgid) {
    to(port_by_gid(s, req.dgid));
  } else if (mask & pr::kDlid) {
    to(s.by_lid(req.dlid));
  } else {
    for (const SubnetPort* d : by_guid) {
      if (done()) break;
      to(d);
    }
  }
  return wire::mad_status::kOk;
}

}  // namespace ibfab::sm
