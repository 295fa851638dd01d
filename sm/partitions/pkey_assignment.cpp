#include "sm/partitions/pkey_assignment.h"

#include <algorithm>
#include <unordered_map>


namespace ibfab::sm::partitions {
namespace {

constexpr uint16_t kFullBit = 0x8000;
constexpr uint8_t kTypeCa = 1, kTypeSwitch = 2, kTypeRouter = 3;

// OpenSM's partition table order: its map key is the P_Key as stored on
// the wire, read as an integer on a little-endian host.
std::vector<const Partition*> in_table_order(const PartitionConfig& config) {
  std::vector<const Partition*> v;
  for (const auto& [k, p] : config.partitions) v.push_back(&p);
  std::sort(v.begin(), v.end(), [](const Partition* a, const Partition* b) {
    return __builtin_bswap16(a->pkey) < __builtin_bswap16(b->pkey);
  });
  return v;
}

bool covers(Member::Kind kind, uint8_t node_type) {
  switch (kind) {
    case Member::Kind::All: return true;
    case Member::Kind::AllCas: return node_type == kTypeCa;
    case Member::Kind::AllSwitches: return node_type == kTypeSwitch;
    case Member::Kind::AllRouters: return node_type == kTypeRouter;
    default: return false;
  }
}

}  // namespace

std::vector<std::vector<uint16_t>> assign_pkeys(const PartitionConfig& config, std::span<const EndPortRef> ports,
                                                uint64_t sm_port_guid) {
  std::unordered_map<uint64_t, std::size_t> by_guid;
  for (std::size_t i = 0; i < ports.size(); ++i) by_guid.emplace(ports[i].guid, i);
  // Per port: its entries in partition table order, and its index-0 P_Key.
  std::vector<std::vector<uint16_t>> entries(ports.size());
  std::vector<uint16_t> index0(ports.size(), 0);
  constexpr uint8_t kNone = 0, kLimited = 1, kFull = 2;
  std::vector<uint8_t> member(ports.size());
  std::vector<bool> first(ports.size());
  for (const Partition* p : in_table_order(config)) {
    std::fill(member.begin(), member.end(), kNone);
    std::fill(first.begin(), first.end(), false);
    auto add = [&](std::size_t i, const Member& m) {
      member[i] = m.membership == Membership::Limited ? kLimited : kFull;
      // indx0 on one mention sets index 0; a later mention without it
      // clears it, as osm_prtn_add_port does.
      first[i] = m.indx0;
    };
    for (const Member& m : p->members) {
      if (m.kind == Member::Kind::Guid || m.kind == Member::Kind::Self) {
        const auto it = by_guid.find(m.kind == Member::Kind::Self ? sm_port_guid : m.guid);
        if (it != by_guid.end()) add(it->second, m);
        continue;
      }
      for (std::size_t i = 0; i < ports.size(); ++i)
        if (covers(m.kind, ports[i].node_type)) add(i, m);
    }
    for (std::size_t i = 0; i < ports.size(); ++i) {
      if (member[i] == kNone) continue;
      const uint16_t key = static_cast<uint16_t>(p->pkey | (member[i] == kFull ? kFullBit : 0));
      entries[i].push_back(key);
      if (first[i]) index0[i] = key;
    }
  }
  std::vector<std::vector<uint16_t>> tables(ports.size());
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const std::size_t cap = std::max<std::size_t>(ports[i].partition_cap, 1);
    std::vector<uint16_t>& t = tables[i];
    t.assign(cap, 0);
    const uint16_t at0_base = index0[i] ? (index0[i] & 0x7FFF) : kDefaultPKey;
    std::size_t next = 1;
    for (const uint16_t key : entries[i]) {
      if ((key & 0x7FFF) == at0_base) {
        t[0] = key;
      } else if (next < cap) {
        t[next++] = key;
      }
    }
  }
  return tables;
}

std::vector<mad::McMemberRecord> well_known_groups(const PartitionConfig& config) {
  std::vector<const GroupDef*> defs;
  for (const auto& [k, p] : config.partitions)
    for (const GroupDef& g : p.groups) defs.push_back(&g);
  std::sort(defs.begin(), defs.end(), [](const GroupDef* a, const GroupDef* b) { return a->order < b->order; });
  std::vector<mad::McMemberRecord> out;
  for (const GroupDef* d : defs) {
    const GroupDef& g = *d;
    mad::McMemberRecord r;
    r.mgid = g.mgid;
    r.q_key = g.q_key;
    r.mtu_selector = r.rate_selector = r.packet_life_time_selector = mad::selector::kExactly;
    r.mtu = g.mtu;
    r.rate = g.rate;
    r.tclass = g.tclass;
    r.p_key = g.p_key;
    r.sl = g.sl;
    r.flow_label = g.flow_label;
    r.hop_limit = g.scope == 2 ? 0 : 0xFF;
    r.scope = g.scope;
    out.push_back(r);
  }
  return out;
}

}  // namespace ibfab::sm::partitions
