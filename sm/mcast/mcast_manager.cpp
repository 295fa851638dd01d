#include "sm/mcast/mcast_manager.h"

#include <algorithm>
#include <iterator>
#include <array>
#include <set>
#include <stdexcept>
#include <string>

#include "fabric/model/fabric.h"

namespace ibfab::sm {

namespace {
using mad::MftAddress;
using mad::MulticastForwardingTable;
}  // namespace

McastManager::McastManager(const Subnet& subnet, SmpSender& sender, McastPolicies policies)
    : subnet_(subnet), sender_(sender), policies_(std::move(policies).with_defaults()) {}

// --- SA-facing ---

std::optional<uint16_t> McastManager::allocate_mlid(std::optional<uint16_t> requested) {
  return policies_.mlids->allocate(requested, mlid_range());
}

void McastManager::free_mlid(uint16_t mlid) {
  policies_.mlids->free(mlid);
  if (members_.count(mlid) && mlid_range().contains(mlid)) set_members(mlid, {});
}

bool McastManager::admit(uint32_t port, uint16_t mlid) {
  if (port >= subnet_.ports.size()) return false;
  const uint64_t guid = subnet_.ports[port].guid;
  bool already = false;
  if (auto it = members_.find(mlid); it != members_.end())
    already = std::binary_search(it->second.begin(), it->second.end(), guid);
  auto g = groups_of_.find(guid);
  return policies_.admission->admit(g == groups_of_.end() ? 0 : g->second, already);
}

// --- Routing ---

void McastManager::set_members(uint16_t mlid, std::vector<uint32_t> member_ports) {
  if (!MlidRange{0xC000, 0xFFFE}.contains(mlid))
    throw std::out_of_range("LID " + std::to_string(mlid) + " is not a multicast LID");
  std::vector<uint64_t> guids;
  guids.reserve(member_ports.size());
  for (const uint32_t p : member_ports) {
    if (p >= subnet_.ports.size()) throw std::out_of_range("member port index " + std::to_string(p));
    guids.push_back(subnet_.ports[p].guid);
  }
  std::sort(guids.begin(), guids.end());
  guids.erase(std::unique(guids.begin(), guids.end()), guids.end());

  // Only the ports that left or arrived change their group counts (both
  // lists are sorted).
  std::vector<uint64_t>& old = members_[mlid];
  std::vector<uint64_t> gone, came;
  std::set_difference(old.begin(), old.end(), guids.begin(), guids.end(), std::back_inserter(gone));
  std::set_difference(guids.begin(), guids.end(), old.begin(), old.end(), std::back_inserter(came));
  for (const uint64_t g : gone)
    if (--groups_of_[g] == 0) groups_of_.erase(g);
  for (const uint64_t g : came) ++groups_of_[g];
  if (guids.empty()) members_.erase(mlid);
  else old = std::move(guids);

  const std::size_t run = start_run(mlid);
  index_switches();
  const uint16_t block = mad::mft_slot_of(mlid)->block;
  for (const uint64_t guid : route(mlid)) {
    auto it = index_.find(guid);
    if (it == index_.end()) continue;  // no longer in the subnet: unreachable
    for (const MftAddress a : shadow_.stale(guid, positions(it->second), block)) write(guid, a, run);
  }
  finish_if_done(run);
}

void McastManager::reroute_all() {
  const std::size_t run = start_run(0);
  index_switches();
  trees_.clear();
  carried_.clear();
  shadow_.clear_desired();
  for (const auto& [mlid, guids] : members_) route(mlid);
  for (uint32_t s = 0; s < subnet_.graph.switches.size(); ++s) {
    const uint64_t guid = subnet_.graph.switches[s].guid;
    for (const MftAddress a : shadow_.stale(guid, positions(s), std::nullopt)) write(guid, a, run);
  }
  finish_if_done(run);
}

void McastManager::when_programmed(std::function<void()> fn) {
  if (outstanding_ == 0) {
    fn();
    return;
  }
  waiters_.push_back(std::move(fn));
}

void McastManager::index_switches() {
  // The SM replaces the switch list when it publishes a new subnet (a new
  // buffer), so an unchanged buffer and size mean an unchanged index.
  const auto& sw = subnet_.graph.switches;
  if (sw.data() == indexed_data_ && sw.size() == indexed_size_) return;
  index_.clear();
  for (uint32_t s = 0; s < sw.size(); ++s) index_.emplace(sw[s].guid, s);
  indexed_data_ = sw.data();
  indexed_size_ = sw.size();
}

uint8_t McastManager::positions(uint32_t sw) const {
  return static_cast<uint8_t>(subnet_.graph.switches[sw].num_ports / 16 + 1);
}

std::vector<uint64_t> McastManager::route(uint16_t mlid) {
  if (auto old = trees_.find(mlid); old != trees_.end()) {
    for (const uint64_t g : old->second.switches)
      if (--carried_[g] == 0) carried_.erase(g);
    trees_.erase(old);
  }
  const RoutingInput& graph = subnet_.graph;
  const auto n = static_cast<uint32_t>(graph.switches.size());
  std::vector<McastEdge> edges;
  std::size_t member_count = 0;
  if (auto m = members_.find(mlid); m != members_.end()) {
    member_count = m->second.size();
    for (const uint64_t guid : m->second) {
      const SubnetPort* p = subnet_.by_guid(guid);
      if (!p || p->edge_switch < 0 || static_cast<uint32_t>(p->edge_switch) >= n) continue;
      edges.push_back({static_cast<uint32_t>(p->edge_switch), p->is_switch ? uint8_t{0} : p->edge_port, p->is_switch});
    }
  }

  Record rec;
  rec.info.mlid = mlid;
  rec.info.members = edges.size();
  std::map<uint64_t, MftShadow::Masks> masks;
  std::optional<McastTree> tree;
  if (edges.size() >= 2 && mlid_range().contains(mlid)) {
    std::vector<uint32_t> load(n, 0);
    for (uint32_t s = 0; s < n; ++s)
      if (auto c = carried_.find(graph.switches[s].guid); c != carried_.end()) load[s] = c->second;
    const RootQuery q{graph, subnet_.routes, edges, load};
    if (const std::optional<uint32_t> root = policies_.root->select(q))
      tree = policies_.tree->build(graph, subnet_.routes, *root, edges);
  }
  if (tree) {
    std::vector<uint32_t> node_of(n, UINT32_MAX);
    for (uint32_t i = 0; i < tree->nodes.size(); ++i) node_of[tree->nodes[i].sw] = i;
    const auto set_bit = [&](uint32_t sw, uint8_t port) {
      MftShadow::Masks& m = masks[graph.switches[sw].guid];
      m.resize(positions(sw), 0);
      if (mad::mft_position_of(port) < m.size()) m[mad::mft_position_of(port)] |= mad::mft_bit_of(port);
    };
    for (const McastTree::Node& node : tree->nodes) {
      const uint64_t guid = graph.switches[node.sw].guid;
      rec.switches.push_back(guid);
      if (node.sw == node.parent) continue;
      set_bit(node.sw, node.up_port);
      set_bit(node.parent, node.down_port);
      rec.links.push_back(std::min(End{guid, node.up_port}, End{graph.switches[node.parent].guid, node.down_port}));
    }
    for (const McastEdge& e : edges) {
      set_bit(e.sw, e.port);
      rec.info.depth = std::max<unsigned>(rec.info.depth, tree->nodes[node_of[e.sw]].depth);
    }
    rec.info.routed = true;
    rec.info.root = tree->root();
    rec.info.root_guid = graph.switches[tree->root()].guid;
    rec.info.switches = tree->nodes.size();
    rec.info.links = rec.links.size();
    for (const uint64_t g : rec.switches) ++carried_[g];
  }
  std::vector<uint64_t> touched = shadow_.set_desired(mlid, masks);
  touched.insert(touched.end(), rec.switches.begin(), rec.switches.end());
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  if (member_count > 0) trees_.emplace(mlid, std::move(rec));
  return touched;
}

// --- SMPs ---

std::size_t McastManager::start_run(uint16_t mlid) {
  McastProgramming p;
  p.mlid = mlid;
  p.called = sender_.hca().fabric().sim().now();
  runs_.push_back(p);
  run_pending_.push_back(0);
  return runs_.size() - 1;
}

void McastManager::finish_if_done(std::size_t run) {
  if (run_pending_[run] == 0 && !runs_[run].programmed) runs_[run].programmed = sender_.hca().fabric().sim().now();
}

void McastManager::write(uint64_t guid, MftAddress a, std::size_t run) {
  auto it = index_.find(guid);
  if (it == index_.end() || it->second >= subnet_.switch_paths.size()) {
    // No directed route to it: count it, and leave the shadow stale so the
    // next call tries again.
    ++smps_failed_;
    ++runs_[run].failed;
    return;
  }
  const MulticastForwardingTable content = shadow_.desired_block(guid, a);
  const uint64_t seq = shadow_.sent(guid, a, content);
  std::array<uint8_t, MulticastForwardingTable::kSize> data{};
  content.pack(data);
  ++smps_sent_;
  ++outstanding_;
  ++runs_[run].smps;
  ++run_pending_[run];
  std::weak_ptr<bool> alive = alive_;
  sender_.set(subnet_.switch_paths[it->second], MulticastForwardingTable::kAttributeId,
              mad::mft_attribute_modifier(a), data,
              [this, alive, guid, a, seq, run](std::span<const uint8_t> smp, uint16_t status) {
                if (alive.expired()) return;
                answered(guid, a, seq, run, !smp.empty() && status == 0);
              });
}

void McastManager::answered(uint64_t guid, MftAddress a, uint64_t seq, std::size_t run, bool ok) {
  --outstanding_;
  --run_pending_[run];
  if (!ok) {
    ++smps_failed_;
    ++runs_[run].failed;
  }
  // An older write that landed after a newer one: write the block again
  // (a failed write is left for the next reroute, so a dead switch does not
  // make this loop).
  if (shadow_.answered(guid, a, seq, ok) && ok) {
    index_switches();
    write(guid, a, run);
  }
  finish_if_done(run);
  if (outstanding_ == 0) {
    std::vector<std::function<void()>> waiters;
    waiters.swap(waiters_);
    for (auto& w : waiters) w();
  }
}

// --- Queries ---

std::vector<uint64_t> McastManager::members(uint16_t mlid) const {
  auto it = members_.find(mlid);
  return it == members_.end() ? std::vector<uint64_t>{} : it->second;
}

const McastTreeInfo* McastManager::tree(uint16_t mlid) const {
  auto it = trees_.find(mlid);
  return it == trees_.end() ? nullptr : &it->second.info;
}

std::vector<McastTreeInfo> McastManager::trees() const {
  std::vector<McastTreeInfo> out;
  out.reserve(trees_.size());
  for (const auto& [mlid, rec] : trees_) out.push_back(rec.info);
  return out;
}

McastLinkLoad McastManager::link_load() const {
  McastLinkLoad load;
  std::set<End> cables;
  const auto& sw = subnet_.graph.switches;
  for (const RoutingSwitch& s : sw)
    for (std::size_t p = 1; p < s.ports.size(); ++p) {
      const RoutingSwitch::Peer& peer = s.ports[p];
      if (peer.kind != RoutingSwitch::Peer::Kind::Switch || peer.sw >= sw.size()) continue;
      cables.insert(std::min(End{s.guid, static_cast<uint8_t>(p)}, End{sw[peer.sw].guid, peer.port}));
    }
  std::map<End, uint32_t> used;
  for (const auto& [mlid, rec] : trees_)
    for (const End& e : rec.links) ++used[e];
  uint64_t sum = 0;
  for (const auto& [end, count] : used) {
    if (!cables.count(end)) continue;  // a tree from before the subnet changed
    load.max = std::max(load.max, count);
    sum += count;
    ++load.used;
  }
  load.total = cables.size();
  load.mean = load.total ? static_cast<double>(sum) / static_cast<double>(load.total) : 0.0;
  return load;
}

}  // namespace ibfab::sm
