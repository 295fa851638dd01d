// The SubnetManager's partition phase (the contract is in subnet_manager.h):
// after the election, before LIDs, as OpenSM's osm_pkey_mgr_process runs
// in its sweep. Each end port's P_KeyTable as read in read_ports is
// compared block by block with the table the partition configuration gives
// it; a block that differs is Set, and the SMA's answer becomes the port's
// table in the Subnet the SA reads.
#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "fabric/mad/pkey_table.h"
#include "sm/partitions/partition_reader.h"
#include "sm/partitions/pkey_assignment.h"
#include "sm/subnet_manager.h"

namespace ibfab::sm {
namespace {

// The directed route that enters `node` by `port`: the node's own route for
// a switch or the port discovery entered by, else the route to the switch
// cabled to that port and out of it (a CA answers P_KeyTable for the port
// an SMP arrives on). Empty optional when there is no such route.
std::optional<DrRoute> route_to_port(const DiscoveryResult& r, const std::unordered_map<uint64_t, uint32_t>& by_guid,
                                     uint32_t node, uint8_t port) {
  const DiscoveredNode& n = r.nodes[node];
  if (n.is_switch() || port == n.entry_port) return DrRoute(n.path);
  for (const DiscoveredLink& l : r.links) {
    const bool a = l.a_guid == n.guid && l.a_port == port, b = l.b_guid == n.guid && l.b_port == port;
    if (!a && !b) continue;
    const DiscoveredNode& peer = r.nodes[by_guid.at(a ? l.b_guid : l.a_guid)];
    if (!peer.is_switch() || peer.path.size() >= mad::dr_smp::kMaxHops) return std::nullopt;
    std::vector<uint8_t> path = peer.path;
    path.push_back(a ? l.b_port : l.a_port);
    return DrRoute(path);
  }
  return std::nullopt;
}

}  // namespace

void SubnetManager::program_pkeys() {
  if (!still_master()) {
    sweeping_ = false;
    return;
  }
  static const partitions::PartitionConfig kNoFile = partitions::default_partitions();
  const partitions::PartitionConfig& config = options_.partition_config ? *options_.partition_config : kNoFile;
  const DiscoveryResult& r = discovery_.result();
  std::vector<partitions::EndPortRef> refs(end_ports_.size());
  for (std::size_t i = 0; i < end_ports_.size(); ++i) {
    const DiscoveredNode& n = r.nodes[end_ports_[i].node];
    refs[i] = {end_ports_[i].guid, n.type, n.partition_cap};
  }
  const auto tables = partitions::assign_pkeys(config, refs, end_ports_[0].guid);
  constexpr std::size_t kPer = mad::PKeyTable::kEntriesPerBlock;
  for (uint32_t i = 0; i < end_ports_.size(); ++i) {
    std::vector<uint16_t>& have = building_.ports[i].pkeys;
    const std::vector<uint16_t>& want = tables[i];
    std::optional<DrRoute> route;
    for (std::size_t b = 0; b * kPer < have.size(); ++b) {
      mad::PKeyTable t;
      for (std::size_t k = 0; k < kPer && b * kPer + k < want.size(); ++k) t.p_key[k] = want[b * kPer + k];
      if (std::equal(t.p_key.begin(), t.p_key.end(), have.begin() + static_cast<std::ptrdiff_t>(b * kPer))) continue;
      if (!route) route = route_to_port(r, node_by_guid_, end_ports_[i].node, end_ports_[i].port);
      if (!route) break;
      std::array<uint8_t, 64> data{};
      t.pack(data);
      sender_.set(route->span(), mad::PKeyTable::kAttributeId, static_cast<uint32_t>(b), data,
                  [this, i, b](std::span<const uint8_t> ans, uint16_t st) {
                    if (ans.empty() || st != 0) return;
                    const auto now = mad::PKeyTable::unpack(smp_data(ans));
                    std::copy(now.p_key.begin(), now.p_key.end(),
                              building_.ports[i].pkeys.begin() + static_cast<std::ptrdiff_t>(b * kPer));
                  });
    }
  }
  sender_.when_idle([this] { assign_lids(); });
}

}  // namespace ibfab::sm
