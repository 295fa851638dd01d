#include "sm/sa/mcast_groups.h"

#include <algorithm>
#include <cstring>

#include "fabric/wire/mad_header.h"
#include "sm/sa/pkey_rules.h"
#include "sm/sa/sa_enums.h"

namespace ibfab::sm {
namespace {

namespace comp = mad::mcm_comp;
namespace js = mad::join_state;
namespace st = wire::mad_status;
using Rec = mad::McMemberRecord;

constexpr uint8_t kFullBits = js::kFull | js::kSendOnlyFull;
constexpr uint16_t kPKeyBase = pkey::kBase;
constexpr uint64_t kLinkLocalPrefix = 0xfe80000000000000ull;

bool masked(uint64_t mask, uint64_t bits) { return (mask & bits) == bits; }
bool holds_pkey(const SubnetPort& p, uint16_t k) { return pkey::holds(p, k); }
bool pkeys_match(uint16_t a, uint16_t b) { return pkey::match(a, b); }
bool share_pkey(const SubnetPort& a, const SubnetPort& b) { return pkey::shared(a, b); }

McastResult failure(uint16_t status, const Rec& req) { return {status, req}; }

// Masked Q_Key, TClass, SL, FlowLabel, HopLimit equal; masked P_Key
// matches. The join validation of 3.1 rule 9 and the IPoIB broadcast
// comparison of rule 8.
bool fields_agree(const Rec& group, const Rec& req, uint64_t mask) {
  if ((mask & comp::kQKey) && req.q_key != group.q_key) return false;
  if ((mask & comp::kTClass) && req.tclass != group.tclass) return false;
  if ((mask & comp::kSl) && req.sl != group.sl) return false;
  if ((mask & comp::kFlowLabel) && req.flow_label != group.flow_label) return false;
  if ((mask & comp::kHopLimit) && req.hop_limit != group.hop_limit) return false;
  if ((mask & comp::kPKey) && !pkeys_match(req.p_key, group.p_key)) return false;
  return true;
}

std::optional<uint8_t> mtu_selector(const Rec& r, uint64_t mask) {
  if (!masked(mask, comp::kMtuSelector | comp::kMtu)) return std::nullopt;
  return r.mtu_selector;
}
std::optional<uint8_t> rate_selector(const Rec& r, uint64_t mask) {
  if (!masked(mask, comp::kRateSelector | comp::kRate)) return std::nullopt;
  return r.rate_selector;
}

}  // namespace

McastGroups::McastGroups(const Subnet& subnet, McastRouting& routing, McastOptions options)
    : subnet_(&subnet), routing_(&routing), options_(options) {
  ensure_well_known();
}

wire::Gid McastGroups::assigned_mgid(uint64_t prefix, uint8_t scope, uint32_t counter) {
  wire::Gid g;
  g.raw[0] = 0xFF;
  g.raw[1] = static_cast<uint8_t>(0x10u | (scope & 0xFu));
  g.raw[2] = 0xA0;
  g.raw[3] = 0x1B;
  for (std::size_t i = 0; i < 6; ++i) g.raw[4 + i] = static_cast<uint8_t>(prefix >> (56 - 8 * i));
  std::memcpy(&g.raw[10], &counter, 4);  // host order, as OpenSM writes it
  return g;
}

wire::Gid McastGroups::ipoib_broadcast_mgid(uint8_t scope, uint16_t pkey) {
  wire::Gid g;
  g.raw[0] = 0xFF;
  g.raw[1] = static_cast<uint8_t>(0x10u | (scope & 0xFu));
  g.raw[2] = 0x40;
  g.raw[3] = 0x1B;
  g.raw[4] = static_cast<uint8_t>(pkey >> 8);
  g.raw[5] = static_cast<uint8_t>(pkey);
  for (std::size_t i = 12; i < 16; ++i) g.raw[i] = 0xFF;
  return g;
}

void McastGroups::ensure_well_known() {
  if (!options_.ipoib_broadcast) return;
  if (options_.well_known) {
    for (const Rec& r : *options_.well_known) add_well_known(r);
    return;
  }
  Rec r;
  r.mgid = ipoib_broadcast_mgid(2, 0xFFFF);
  r.q_key = 0x0B1B;
  r.mtu_selector = r.rate_selector = r.packet_life_time_selector = mad::selector::kExactly;
  r.mtu = 4;   // 2048
  r.rate = 3;  // 10 Gb/s
  r.p_key = 0xFFFF;
  r.scope = 2;
  add_well_known(r);
}

void McastGroups::add_well_known(const Rec& rec) {
  if (groups_.count(rec.mgid)) return;
  const std::optional<uint16_t> mlid = routing_->allocate_mlid(std::nullopt);
  if (!mlid) return;
  McastGroup g;
  g.well_known = true;
  g.rec = rec;
  g.rec.mlid = *mlid;
  groups_.emplace(rec.mgid, g);
}

const McastGroup* McastGroups::find(const wire::Gid& mgid) const {
  auto it = groups_.find(mgid);
  return it == groups_.end() ? nullptr : &it->second;
}

const SubnetPort* McastGroups::port_of(const wire::Gid& port_gid) const {
  return subnet_->by_guid(port_gid.guid());
}

bool McastGroups::prefix_ok(const wire::Gid& port_gid) const {
  return port_gid.prefix() == subnet_->prefix || port_gid.prefix() == kLinkLocalPrefix;
}

Rec McastGroups::response(const McastGroup& g, Rec rec) const {
  const Rec& s = g.rec;
  rec.mgid = s.mgid;
  rec.q_key = s.q_key;
  rec.mlid = s.mlid;
  rec.mtu_selector = rec.rate_selector = rec.packet_life_time_selector = mad::selector::kExactly;
  rec.mtu = s.mtu;
  rec.tclass = s.tclass;
  rec.p_key = s.p_key;
  rec.rate = s.rate;
  rec.packet_life_time = s.packet_life_time;
  rec.sl = s.sl;
  rec.flow_label = s.flow_label;
  rec.hop_limit = s.hop_limit;
  rec.scope = s.scope;
  return rec;
}

// 3.1 rule 8, given MGID (ipoib_mcgroup_creation_validation).
uint16_t McastGroups::validate_mgid(const Rec& req, uint64_t mask) const {
  const auto& g = req.mgid.raw;
  if (g[0] != 0xFF) return st::kSaReqInvalid;
  const uint16_t signature = static_cast<uint16_t>(g[2] << 8 | g[3]);
  const uint8_t scope = g[1] & 0xF;
  if (signature == 0x401B || signature == 0x601B) {
    const uint16_t pkey = static_cast<uint16_t>(g[4] << 8 | g[5]);
    const wire::Gid bcast = ipoib_broadcast_mgid(scope, pkey);
    if (signature == 0x401B && std::equal(g.begin() + 4, g.end(), bcast.raw.begin() + 4))
      return st::kOk;  // the broadcast group itself
    const McastGroup* b = find(bcast);
    if (!b || !fields_agree(b->rec, req, mask)) return st::kSaReqInvalid;
    return st::kOk;
  }
  if (g[1] & 0xE0) return st::kSaReqInvalid;
  if (signature == 0xA01B && scope == 2) return st::kSaReqInvalid;
  return st::kOk;
}

// 3.1 rule 8: creates the group (no members yet) or returns a status.
uint16_t McastGroups::create(uint32_t port_index, const Rec& req, uint64_t mask,
                             wire::Gid& mgid) {
  const SubnetPort& port = subnet_->ports[port_index];
  if (req.mgid.is_zero()) {
    const uint8_t scope = (mask & comp::kScope) ? (req.scope & 0xF) : 2;
    bool found = false;
    for (uint32_t i = 0; i < options_.mgid_tries && !found; ++i) {
      mgid = assigned_mgid(subnet_->prefix, scope, mgid_counter_++);
      found = groups_.count(mgid) == 0;
    }
    if (!found) return st::kSaNoResources;
  } else {
    mgid = req.mgid;
    if (options_.creation_validation)
      if (uint16_t s = validate_mgid(req, mask)) return s;
  }
  const auto mtu = sa_enum::resolve(sa_enum::Kind::kMtu, mtu_selector(req, mask), req.mtu,
                                    port.neighbor_mtu);
  const auto rate = sa_enum::resolve(sa_enum::Kind::kRate, rate_selector(req, mask), req.rate,
                                     port.rate);
  if (!mtu || !rate) return st::kSaReqInvalid;
  const std::optional<uint16_t> mlid =
      routing_->allocate_mlid(req.mlid ? std::optional<uint16_t>(req.mlid) : std::nullopt);
  if (!mlid) return st::kSaNoResources;
  McastGroup g;
  Rec& r = g.rec;
  r.mgid = mgid;
  r.q_key = req.q_key;
  r.mlid = *mlid;
  r.mtu_selector = r.rate_selector = r.packet_life_time_selector = mad::selector::kExactly;
  r.mtu = *mtu;
  r.tclass = req.tclass;
  r.p_key = req.p_key;
  r.rate = *rate;
  r.packet_life_time = req.packet_life_time;
  r.sl = req.sl;
  r.flow_label = req.flow_label;
  r.hop_limit = req.hop_limit;
  r.scope = req.scope & 0xF;  // as the creator gave it, as OpenSM keeps it
  groups_.emplace(mgid, std::move(g));
  return st::kOk;
}

// 3.1 rule 10.
uint16_t McastGroups::check_group_fields(const McastGroup& g, const SubnetPort& port,
                                         const Rec& req, uint64_t mask) const {
  if (auto sel = mtu_selector(req, mask))
    if (!sa_enum::satisfies(sa_enum::Kind::kMtu, g.rec.mtu, *sel, req.mtu)) return st::kSaReqInvalid;
  if (auto sel = rate_selector(req, mask))
    if (!sa_enum::satisfies(sa_enum::Kind::kRate, g.rec.rate, *sel, req.rate))
      return st::kSaReqInvalid;
  if (port.neighbor_mtu < g.rec.mtu) return st::kSaReqInvalid;
  if (sa_enum::compare_rates(port.rate, g.rec.rate) < 0) return st::kSaReqInvalid;
  if ((req.join_state & 0xF) == 0) return st::kSaReqInvalid;
  if (!holds_pkey(port, g.rec.p_key)) return st::kSaReqInvalid;
  return st::kOk;
}

McastResult McastGroups::join(uint32_t requester, const Rec& req, uint64_t mask) {
  if (requester >= subnet_->ports.size()) return failure(st::kSaReqInvalid, req);
  // Rule 1.
  if (!masked(mask, comp::kJoinRequiredMask)) return failure(st::kSaInsufficientComponents, req);
  // Section 4: an SA that does not know SendOnlyFullMember.
  if (!options_.send_only_full_member && (req.join_state & js::kSendOnlyFull))
    return failure(st::kSaReqInvalid, req);
  // Rule 2.
  if (mtu_selector(req, mask) && !sa_enum::valid_mtu(req.mtu)) return failure(st::kSaReqInvalid, req);
  if (rate_selector(req, mask) && !sa_enum::valid_rate(req.rate))
    return failure(st::kSaReqInvalid, req);
  // Rules 3 and 4.
  if (!prefix_ok(req.port_gid)) return failure(st::kSaInvalidGid, req);
  const uint64_t guid = req.port_gid.guid();
  const SubnetPort* port = port_of(req.port_gid);
  if (!port) return failure(st::kSaReqInvalid, req);
  const uint32_t port_index = subnet_->port_by_guid.at(guid);
  const SubnetPort& asker = subnet_->ports[requester];
  // Rule 5.
  const bool proxy = port_index != requester;
  if (proxy && !share_pkey(*port, asker)) return failure(st::kSaReqInvalid, req);
  // Rule 6.
  if ((mask & comp::kPKey) && (req.p_key & kPKeyBase) == 0) return failure(st::kSaReqInvalid, req);

  auto it = req.mgid.is_zero() ? groups_.end() : groups_.find(req.mgid);
  const bool created = it == groups_.end();
  if (created) {
    // Rule 7.
    if (!(req.join_state & kFullBits)) return failure(st::kSaReqInvalid, req);
    if (!masked(mask, comp::kCreateRequiredMask)) return failure(st::kSaInsufficientComponents, req);
    // Rule 8.
    wire::Gid mgid;
    if (uint16_t s = create(port_index, req, mask, mgid)) return failure(s, req);
    it = groups_.find(mgid);
  } else if (options_.join_validation && !fields_agree(it->second.rec, req, mask)) {
    // Rule 9.
    return failure(st::kSaReqInvalid, req);
  }
  McastGroup& g = it->second;
  auto fail = [&](uint16_t s) {
    if (created) {
      routing_->free_mlid(g.rec.mlid);
      groups_.erase(it);
    }
    return failure(s, req);
  };
  // Rule 10.
  if (uint16_t s = check_group_fields(g, *port, req, mask)) return fail(s);
  // Rule 11.
  auto mit = g.members.find(guid);
  const bool new_port = mit == g.members.end();
  if (!new_port) {
    if (!mit->second.proxy_join ? proxy : !holds_pkey(asker, g.rec.p_key))
      return fail(st::kSaReqInvalid);
  } else if (!routing_->admit(port_index, g.rec.mlid)) {
    return fail(st::kSaNoResources);
  }
  // Rule 12.
  if (new_port) mit = g.members.emplace(guid, McastMember{guid, 0, proxy}).first;
  McastMember& m = mit->second;
  const uint8_t before = m.join_state;
  m.join_state = static_cast<uint8_t>(before | (req.join_state & 0xF));
  if (!(before & kFullBits) && (m.join_state & kFullBits) && ++g.full_members == 1 && on_trap)
    on_trap(66, g);
  if (new_port) routing_->add_member(g.rec.mlid, guid);
  Rec out = response(g, req);
  out.join_state = m.join_state;
  return {st::kOk, out};
}

void McastGroups::delete_group(std::map<wire::Gid, McastGroup>::iterator it) {
  McastGroup& g = it->second;
  const uint16_t mlid = g.rec.mlid;
  g.members.clear();
  routing_->clear_members(mlid);
  if (g.well_known) return;
  groups_.erase(it);
  routing_->free_mlid(mlid);
}

uint8_t McastGroups::remove_bits(std::map<wire::Gid, McastGroup>::iterator git, uint64_t port_guid,
                                 uint8_t bits) {
  McastGroup& g = git->second;
  auto mit = g.members.find(port_guid);
  const uint8_t stored = mit->second.join_state;
  const uint8_t remaining = static_cast<uint8_t>(stored & ~bits & 0xF);
  // OpenSM's keep test looks at Full only (the leak); ours at both bits.
  const uint8_t keep_bits = options_.reproduce_opensm_leave_leak ? js::kFull : kFullBits;
  const uint32_t self = (stored & keep_bits) ? 1 : 0;
  const bool keep = (remaining & keep_bits) || (remaining != 0 && g.full_members > self);
  uint8_t result = remaining;
  bool removed = false;
  if (keep) {
    mit->second.join_state = remaining;
  } else {
    g.members.erase(mit);
    result = 0;
    removed = true;
  }
  if ((stored & kFullBits) && !(remaining & kFullBits) && --g.full_members == 0) {
    if (on_trap) on_trap(67, g);
    delete_group(git);
    return result;
  }
  if (removed) routing_->remove_member(g.rec.mlid, port_guid);
  return result;
}

McastResult McastGroups::leave(uint32_t requester, const Rec& req, uint64_t mask) {
  if (requester >= subnet_->ports.size()) return failure(st::kSaReqInvalid, req);
  if (!masked(mask, comp::kJoinRequiredMask)) return failure(st::kSaInsufficientComponents, req);
  if (!prefix_ok(req.port_gid)) return failure(st::kSaInvalidGid, req);
  auto git = groups_.find(req.mgid);
  if (git == groups_.end()) return failure(st::kSaReqInvalid, req);
  McastGroup& g = git->second;
  const uint64_t guid = req.port_gid.guid();
  auto mit = g.members.find(guid);
  auto pit = subnet_->port_by_guid.find(guid);
  if (mit == g.members.end() || pit == subnet_->port_by_guid.end())
    return failure(st::kSaReqInvalid, req);
  const bool proxy = pit->second != requester;
  const SubnetPort& asker = subnet_->ports[requester];
  if (!mit->second.proxy_join ? proxy : !holds_pkey(asker, g.rec.p_key))
    return failure(st::kSaReqInvalid, req);
  const uint8_t bits = req.join_state & 0xF;
  const uint8_t stored = mit->second.join_state;
  if ((bits & stored) == 0 || (bits & ~stored) != 0) return failure(st::kSaReqInvalid, req);
  Rec out = req;
  out.join_state = remove_bits(git, guid, bits);
  out.mtu_selector = out.rate_selector = out.packet_life_time_selector = mad::selector::kExactly;
  return {st::kOk, out};
}

void McastGroups::drop_port(uint64_t port_guid) {
  std::vector<wire::Gid> of_port;
  for (const auto& [mgid, g] : groups_)
    if (g.members.count(port_guid)) of_port.push_back(mgid);
  for (const wire::Gid& mgid : of_port) {
    auto git = groups_.find(mgid);
    if (git == groups_.end()) continue;
    auto mit = git->second.members.find(port_guid);
    if (mit == git->second.members.end()) continue;
    remove_bits(git, port_guid, 0xF);
  }
}

std::vector<Rec> McastGroups::get(uint32_t requester, const Rec& req, uint64_t mask,
                                  bool trusted) const {
  std::vector<Rec> out;
  if (requester >= subnet_->ports.size()) return out;
  const SubnetPort& asker = subnet_->ports[requester];
  auto member_record = [&](const McastGroup& g, const McastMember& m) {
    Rec r;
    if (trusted) {
      r.port_gid = wire::Gid::from(subnet_->prefix, m.port_guid);
      r.join_state = m.join_state;
      r.proxy_join = m.proxy_join;
    }
    return response(g, r);
  };
  for (const auto& [mgid, g] : groups_) {
    const Rec& s = g.rec;
    if ((mask & comp::kMgid) && req.mgid != s.mgid) continue;
    if ((mask & comp::kMlid) && req.mlid != s.mlid) continue;
    if (!holds_pkey(asker, s.p_key)) continue;
    if ((mask & comp::kQKey) && req.q_key != s.q_key) continue;
    if ((mask & comp::kPKey) && req.p_key != s.p_key) continue;
    if ((mask & comp::kTClass) && req.tclass != s.tclass) continue;
    if ((mask & comp::kSl) && req.sl != s.sl) continue;
    if ((mask & comp::kFlowLabel) && req.flow_label != s.flow_label) continue;
    if ((mask & comp::kHopLimit) && req.hop_limit != s.hop_limit) continue;
    if (auto sel = mtu_selector(req, mask))
      if (!sa_enum::satisfies(sa_enum::Kind::kMtu, s.mtu, *sel, req.mtu)) continue;
    if (auto sel = rate_selector(req, mask))
      if (!sa_enum::satisfies(sa_enum::Kind::kRate, s.rate, *sel, req.rate)) continue;
    const bool want_proxy = (mask & comp::kProxyJoin) != 0;
    if (mask & comp::kPortGid) {
      auto mit = g.members.find(req.port_gid.guid());
      if (mit == g.members.end()) continue;
      if (want_proxy && mit->second.proxy_join != req.proxy_join) continue;
      out.push_back(member_record(g, mit->second));
    } else if (trusted) {
      for (const auto& [guid, m] : g.members)
        if (!want_proxy || m.proxy_join == req.proxy_join) out.push_back(member_record(g, m));
    } else if (!want_proxy || !req.proxy_join) {
      out.push_back(response(g, Rec{}));
    }
  }
  return out;
}

std::string McastGroups::check_invariants() const {
  std::map<uint16_t, wire::Gid> mlids;
  for (const auto& [mgid, g] : groups_) {
    if (g.rec.mgid != mgid) return "group key differs from its MGID " + mgid.str();
    uint32_t full = 0;
    for (const auto& [guid, m] : g.members) {
      if (m.port_guid != guid) return "member key differs from its GUID in " + mgid.str();
      if (m.join_state == 0 || m.join_state > 0xF) return "bad JoinState in " + mgid.str();
      if (m.join_state & kFullBits) ++full;
    }
    if (full != g.full_members) return "full_members mismatch in " + mgid.str();
    if (!g.well_known && full == 0) return "group without a full member: " + mgid.str();
    if (!mlids.emplace(g.rec.mlid, mgid).second) return "MLID shared by " + mgid.str();
  }
  return {};
}

}  // namespace ibfab::sm
