#include "sm/sa/inform_table.h"

#include <algorithm>

#include "fabric/wire/mad_header.h"
#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace ii = mad::inform_info;

// Same subscriber, same selection of notices.
bool same(const Subscription& s, uint64_t guid, const fabric::MadAddress& from,
          const mad::InformInfo& i) {
  const mad::InformInfo& a = s.info;
  return s.port_guid == guid && s.to.lid == from.lid && a.qpn == (from.qpn & 0xFFFFFF) &&
         a.gid == i.gid && a.lid_range_begin == i.lid_range_begin &&
         a.lid_range_end == i.lid_range_end && a.is_generic == i.is_generic && a.type == i.type &&
         a.trap_number == i.trap_number && a.producer_type == i.producer_type;
}

}  // namespace

uint16_t InformTable::set(const Subnet& subnet, uint32_t requester, const fabric::MadAddress& from,
                          const mad::InformInfo& info, bool trusted, mad::InformInfo& stored) {
  constexpr uint16_t kInvalid = wire::mad_status::kSaReqInvalid;
  if (requester >= subnet.ports.size()) return kInvalid;
  if (info.subscribe > 1 || info.is_generic > 1) return kInvalid;
  if (info.is_generic && info.trap_number >= 256 && info.trap_number <= 259 && !trusted)
    return kInvalid;
  const uint64_t guid = subnet.ports[requester].guid;
  stored = info;
  stored.qpn = from.qpn & 0xFFFFFF;
  auto it = std::find_if(subs_.begin(), subs_.end(),
                         [&](const Subscription& s) { return same(s, guid, from, info); });
  if (info.subscribe == ii::kSubscribe) {
    if (it == subs_.end()) subs_.push_back(Subscription{stored, from, guid});
    return wire::mad_status::kOk;
  }
  if (it == subs_.end()) return kInvalid;
  subs_.erase(it);
  return wire::mad_status::kOk;
}

std::vector<const Subscription*> InformTable::match(const Subnet& subnet, const mad::Notice& n,
                                                    std::optional<uint16_t> group_pkey) const {
  std::vector<const Subscription*> out;
  for (const Subscription& s : subs_) {
    const mad::InformInfo& i = s.info;
    if (!i.gid.is_zero()) {
      if (i.gid.raw != n.issuer_gid) continue;
    } else if (i.lid_range_begin != ii::kAllLids &&
               (n.issuer_lid < i.lid_range_begin || n.issuer_lid > i.lid_range_end)) {
      continue;
    }
    if ((i.is_generic != 0) != n.is_generic) continue;
    if (i.type != ii::kAllTypes && i.type != n.type) continue;
    if (i.trap_number != ii::kAllTraps && i.trap_number != n.trap_number) continue;
    if (i.producer_type != ii::kAllProducers && i.producer_type != n.producer_type) continue;
    if (group_pkey) {
      const SubnetPort* p = subnet.by_guid(s.port_guid);
      if (!p || !pkey::holds(*p, *group_pkey)) continue;
    }
    out.push_back(&s);
  }
  return out;
}

void InformTable::drop_port(uint64_t port_guid) {
  subs_.erase(std::remove_if(subs_.begin(), subs_.end(),
                             [&](const Subscription& s) { return s.port_guid == port_guid; }),
              subs_.end());
}

void InformTable::records(const Subnet& subnet, uint32_t requester,
                          const mad::InformInfoRecord& req, uint64_t mask, bool trusted,
                          std::vector<mad::InformInfoRecord>& out) const {
  out.clear();
  if (requester >= subnet.ports.size()) return;
  for (const Subscription& sub : subs_) {
    mad::InformInfoRecord r;
    r.subscriber_gid = wire::Gid::from(subnet.prefix, sub.port_guid);
    r.subscriber_enum = 0;
    r.inform_info = sub.info;
    if ((mask & mad::iir_comp::kSubscriberGid) && r.subscriber_gid != req.subscriber_gid) continue;
    if ((mask & mad::iir_comp::kEnum) && r.subscriber_enum != req.subscriber_enum) continue;
    const SubnetPort* p = subnet.by_guid(sub.port_guid);
    if (!p || !pkey::shared(subnet.ports[requester], *p)) continue;
    if (!trusted) r.inform_info.qpn = 0;
    out.push_back(r);
  }
}

}  // namespace ibfab::sm
