#include "sm/sa/path_records.h"

#include <algorithm>
#include <optional>

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

// The first P_Key of `a` that `b` shares, preferring the default one.
std::optional<uint16_t> common_pkey(const SubnetPort& a, const SubnetPort& b) {
  std::optional<uint16_t> first;
  for (uint16_t x : a.pkeys) {
    if (!std::any_of(b.pkeys.begin(), b.pkeys.end(), [&](uint16_t y) { return pkey::match(x, y); }))
      continue;
    if ((x & pkey::kBase) == pkey::kBase) return static_cast<uint16_t>(x | pkey::kFull);
    if (!first) first = x;
  }
  return first;
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
  const uint8_t mtu_cap = std::min(src.neighbor_mtu, dst.neighbor_mtu);
  const uint8_t rate_cap = sa_enum::compare_rates(src.rate, dst.rate) <= 0 ? src.rate : dst.rate;
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
                      std::vector<mad::PathRecord>& out) {
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

  const auto to = [&](const SubnetPort* d) {
    mad::PathRecord r;
    if (d && unicast_path(s, *src, *d, req, mask, packet_life, r)) out.push_back(r);
  };
  if (mask & pr::kDgid) {
    to(port_by_gid(s, req.dgid));
  } else if (mask & pr::kDlid) {
    to(s.by_lid(req.dlid));
  } else {
    for (const SubnetPort& d : s.ports) to(&d);
  }
  return wire::mad_status::kOk;
}

}  // namespace ibfab::sm
