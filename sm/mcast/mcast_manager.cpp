#include "sm/mcast/mcast_manager.h"

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>
#include <string>

#include "fabric/mad/switch_info.h"
#include "fabric/model/fabric.h"

namespace ibfab::sm {

namespace {
using mad::MftAddress;
using mad::MulticastForwardingTable;

void check_multicast(uint16_t mlid) {
  if (!MlidRange{0xC000, 0xFFFE}.contains(mlid))
    throw std::out_of_range("LID " + std::to_string(mlid) + " is not a multicast LID");
}
}  // namespace

McastManager::McastManager(const Subnet& subnet, SmpSender& sender, McastPolicies policies, sim::Time batch)
    : subnet_(subnet), sender_(sender), policies_(std::move(policies).with_defaults()), batch_(batch) {
  resync();
}

// --- SA-facing ---

std::optional<uint16_t> McastManager::allocate_mlid(std::optional<uint16_t> requested) {
  return policies_.mlids->allocate(requested, mlid_range());
}

void McastManager::free_mlid(uint16_t mlid) {
  policies_.mlids->free(mlid);
  if (groups_.count(mlid)) clear_members(mlid);
}

bool McastManager::admit(uint32_t port, uint16_t mlid) {
  if (port >= subnet_.ports.size()) return false;
  const uint64_t guid = subnet_.ports[port].guid;
  auto g = groups_.find(mlid);
  const bool already = g != groups_.end() && g->second.members.count(guid);
  auto n = groups_of_.find(guid);
  return policies_.admission->admit(n == groups_of_.end() ? 0 : n->second, already);
}

// --- Membership ---

void McastManager::add_member(uint16_t mlid, uint64_t port_guid) {
  check_multicast(mlid);
  if (subnet_changed()) reroute_all();
  start_run(mlid);
  join(mlid, groups_[mlid], port_guid);
}

void McastManager::remove_member(uint16_t mlid, uint64_t port_guid) {
  check_multicast(mlid);
  if (subnet_changed()) reroute_all();
  start_run(mlid);
  if (auto g = groups_.find(mlid); g != groups_.end()) leave(mlid, g->second, port_guid);
  drop_if_empty(mlid);
}

void McastManager::clear_members(uint16_t mlid) {
  check_multicast(mlid);
  if (subnet_changed()) reroute_all();
  start_run(mlid);
  if (auto g = groups_.find(mlid); g != groups_.end()) {
    tear_down(mlid, g->second);
    for (const auto& [guid, m] : g->second.members)
      if (--groups_of_[guid] == 0) groups_of_.erase(guid);
    groups_.erase(g);
  }
}

void McastManager::set_members(uint16_t mlid, const std::vector<uint32_t>& member_ports) {
  check_multicast(mlid);
  std::vector<uint64_t> want;
  want.reserve(member_ports.size());
  for (const uint32_t p : member_ports) {
    if (p >= subnet_.ports.size()) throw std::out_of_range("member port index " + std::to_string(p));
    want.push_back(subnet_.ports[p].guid);
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  if (subnet_changed()) reroute_all();
  start_run(mlid);
  Group& g = groups_[mlid];
  std::vector<uint64_t> gone;
  for (const auto& [guid, m] : g.members)
    if (!std::binary_search(want.begin(), want.end(), guid)) gone.push_back(guid);
  std::sort(gone.begin(), gone.end());
  for (const uint64_t guid : gone) leave(mlid, g, guid);
  for (const uint64_t guid : want) join(mlid, g, guid);
  drop_if_empty(mlid);
}

McastManager::Member McastManager::locate(uint64_t guid) const {
  const SubnetPort* p = subnet_.by_guid(guid);
  if (!p || p->edge_switch < 0 || static_cast<std::size_t>(p->edge_switch) >= subnet_.graph.switches.size())
    return {};
  return {static_cast<uint32_t>(p->edge_switch), p->is_switch ? uint8_t{0} : p->edge_port, p->is_switch};
}

void McastManager::join(uint16_t mlid, Group& g, uint64_t guid) {
  auto [it, added] = g.members.try_emplace(guid, locate(guid));
  if (!added) return;
  ++groups_of_[guid];
  const Member m = it->second;
  if (m.sw == kNone) return;
  ++g.attached;
  update(mlid, g, m, true, attach(g, m));
}

void McastManager::leave(uint16_t mlid, Group& g, uint64_t guid) {
  auto it = g.members.find(guid);
  if (it == g.members.end()) return;
  const Member m = it->second;
  g.members.erase(it);
  if (--groups_of_[guid] == 0) groups_of_.erase(guid);
  if (m.sw == kNone) return;
  --g.attached;
  if (g.root != kNone) member_bit(mlid, g, m, false);
  update(mlid, g, m, false, detach(g, m));
}

void McastManager::drop_if_empty(uint16_t mlid) {
  auto g = groups_.find(mlid);
  if (g != groups_.end() && g->second.members.empty()) groups_.erase(g);
}

McastManager::EdgeChange McastManager::attach(Group& g, const Member& m) {
  EdgeMembers& e = g.edges[m.sw];
  const bool first = e.empty();
  const uint8_t before = e.extra();
  if (m.is_switch) e.self = true;
  else ++e.ca;
  if (!g.cost) g.cost = std::make_unique<RootCost>(subnet_.routes, subnet_.graph.switches.size());
  if (first) {
    g.cost->add(m.sw, e.extra());
    return EdgeChange::Added;
  }
  if (e.extra() == before) return EdgeChange::None;
  g.cost->remove(m.sw, before, g.edges);
  g.cost->add(m.sw, e.extra());
  return EdgeChange::Cost;
}

McastManager::EdgeChange McastManager::detach(Group& g, const Member& m) {
  auto it = g.edges.find(m.sw);
  EdgeMembers& e = it->second;
  const uint8_t before = e.extra();
  if (m.is_switch) e.self = false;
  else --e.ca;
  if (e.empty()) {
    g.edges.erase(it);
    if (g.edges.empty()) g.cost.reset();
    else g.cost->remove(m.sw, before, g.edges);
    return EdgeChange::Removed;
  }
  if (e.extra() == before) return EdgeChange::None;
  g.cost->remove(m.sw, before, g.edges);
  g.cost->add(m.sw, e.extra());
  return EdgeChange::Cost;
}

// --- Trees ---

bool McastManager::wants_tree(uint16_t mlid, const Group& g) const {
  return g.attached >= 2 && mlid_range().contains(mlid);
}

void McastManager::update(uint16_t mlid, Group& g, const Member& m, bool joined, EdgeChange c) {
  if (!wants_tree(mlid, g)) {
    tear_down(mlid, g);
    return;
  }
  if ((c != EdgeChange::None || g.root == kNone) && reroot(mlid, g)) return;
  if (joined) {
    if (c == EdgeChange::Added && !grow(mlid, g, m.sw)) {
      tear_down(mlid, g);
      return;
    }
    member_bit(mlid, g, m, true);
  } else if (c == EdgeChange::Removed) {
    prune(mlid, g, m.sw);
  }
}

bool McastManager::reroot(uint16_t mlid, Group& g) {
  // The policy weighs the other trees: this one's switches are not counted.
  for (const auto& [s, n] : g.nodes) --carried_[s];
  const std::optional<uint32_t> root = policies_.root->select(g.cost->costs(), carried_);
  for (const auto& [s, n] : g.nodes) ++carried_[s];
  if (root && *root == g.root) return false;
  tear_down(mlid, g);
  if (root) build(mlid, g, *root);
  return true;
}

void McastManager::build(uint16_t mlid, Group& g, uint32_t root) {
  g.root = root;
  g.nodes.emplace(root, Node{root, 0, 0, 0, 0, {}});
  ++carried_[root];
  for (const auto& [sw, e] : g.edges)
    if (!grow(mlid, g, sw)) {
      tear_down(mlid, g);
      return;
    }
  for (const auto& [guid, m] : g.members)
    if (m.sw != kNone) member_bit(mlid, g, m, true);
}

void McastManager::tear_down(uint16_t mlid, Group& g) {
  for (const auto& [s, n] : g.nodes) {
    publish(mlid, s, {});
    --carried_[s];
  }
  g.nodes.clear();
  g.root = kNone;
}

bool McastManager::grow(uint16_t mlid, Group& g, uint32_t sw) {
  std::optional<uint8_t> from_child;  // the port towards the node the walk came from
  for (uint32_t s = sw;;) {
    auto it = g.nodes.find(s);
    const bool fresh = it == g.nodes.end();  // never the root: it is made first
    if (fresh) {
      const std::optional<McastTree::Node> node = policies_.tree->parent(subnet_.graph, subnet_.routes, g.root, s);
      if (!node) return false;
      it = g.nodes.emplace(s, Node{node->parent, node->up_port, node->down_port, node->depth, 0, {}}).first;
      it->second.mask.set(node->up_port);
      ++carried_[s];
    }
    Node& n = it->second;
    ++n.refs;
    if (from_child) n.mask.set(*from_child);
    if (fresh || from_child) publish(mlid, s, n.mask);
    if (!fresh) return true;
    from_child = n.down_port;
    s = n.parent;
  }
}

void McastManager::prune(uint16_t mlid, Group& g, uint32_t sw) {
  for (uint32_t s = sw;;) {
    auto it = g.nodes.find(s);
    if (--it->second.refs > 0 || s == g.root) return;
    const uint32_t parent = it->second.parent;
    const uint8_t down = it->second.down_port;
    publish(mlid, s, {});
    --carried_[s];
    g.nodes.erase(it);
    Node& p = g.nodes.at(parent);
    p.mask.clear(down);
    publish(mlid, parent, p.mask);
    s = parent;
  }
}

void McastManager::member_bit(uint16_t mlid, Group& g, const Member& m, bool on) {
  Node& n = g.nodes.at(m.sw);
  if (on) n.mask.set(m.port);
  else n.mask.clear(m.port);
  publish(mlid, m.sw, n.mask);
}

void McastManager::publish(uint16_t mlid, uint32_t sw, const PortMask& mask) {
  if (shadow_.set_desired(subnet_.graph.switches[sw].guid, mlid, mask))
    dirty_.push_back(uint64_t{sw} << 16 | mad::mft_slot_of(mlid)->block);
}

bool McastManager::subnet_changed() const {
  const auto& sw = subnet_.graph.switches;
  return sw.data() != synced_data_ || sw.size() != synced_size_;
}

void McastManager::resync() {
  // The SM replaces the switch list when it publishes a new subnet (a new
  // buffer), so an unchanged buffer and size mean unchanged indices.
  const auto& sw = subnet_.graph.switches;
  synced_data_ = sw.data();
  synced_size_ = sw.size();
  index_.clear();
  for (uint32_t s = 0; s < sw.size(); ++s) index_.emplace(sw[s].guid, s);
  carried_.assign(sw.size(), 0);
  dirty_.clear();
  shadow_.clear_desired();
  for (auto& [mlid, g] : groups_) {
    g.nodes.clear();
    g.root = kNone;
    g.edges.clear();
    g.cost.reset();
    g.attached = 0;
    for (auto& [guid, m] : g.members) {
      m = locate(guid);
      if (m.sw == kNone) continue;
      ++g.attached;
      attach(g, m);
    }
    if (wants_tree(mlid, g)) reroot(mlid, g);
  }
}

void McastManager::reroute_all() {
  start_run(0);
  resync();
  flush(true);
}

uint8_t McastManager::positions(uint32_t sw) const {
  return static_cast<uint8_t>(subnet_.graph.switches[sw].num_ports / 16 + 1);
}

void McastManager::when_programmed(std::function<void()> fn) {
  if (outstanding_ == 0) {
    fn();
    return;
  }
  waiters_.push_back(std::move(fn));
}

// --- SMPs ---

void McastManager::start_run(uint16_t mlid) {
  sim::Simulator& sim = sender_.hca().fabric().sim();
  unflushed_.push_back({mlid, sim.now()});
  if (sim.pending(flush_event_)) return;
  std::weak_ptr<bool> alive = alive_;
  flush_event_ = sim.schedule(batch_, [this, alive] {
    if (!alive.expired()) flush(false);
  });
}

void McastManager::flush(bool all) {
  sender_.hca().fabric().sim().cancel(flush_event_);
  if (!all && unflushed_.empty()) return;
  uint32_t batch;
  if (free_batches_.empty()) {
    batch = static_cast<uint32_t>(batches_.size());
    batches_.emplace_back();
  } else {
    batch = free_batches_.back();
    free_batches_.pop_back();
  }
  batches_[batch].calls.swap(unflushed_);  // unflushed_ takes the slot's empty vector and its capacity
  if (all) {
    for (uint32_t s = 0; s < subnet_.graph.switches.size(); ++s) {
      for (const MftAddress a : shadow_.stale(subnet_.graph.switches[s].guid, positions(s), std::nullopt))
        write(s, a, batch);
      update_top(s, batch);
    }
  } else {
    std::sort(dirty_.begin(), dirty_.end());
    dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
    for (std::size_t i = 0; i < dirty_.size(); ++i) {
      const auto sw = static_cast<uint32_t>(dirty_[i] >> 16);
      const auto block = static_cast<uint16_t>(dirty_[i] & 0xFFFF);
      for (const MftAddress a : shadow_.stale(subnet_.graph.switches[sw].guid, positions(sw), block))
        write(sw, a, batch);
      if (i + 1 == dirty_.size() || dirty_[i + 1] >> 16 != sw) update_top(sw, batch);
    }
  }
  dirty_.clear();
  finish_if_done(batch);
}

void McastManager::finish_if_done(uint32_t batch) {
  Batch& b = batches_[batch];
  if (b.pending > 0) return;
  const sim::Time now = sender_.hca().fabric().sim().now();
  for (const Call& c : b.calls) {
    McastProgramming p;
    p.mlid = c.mlid;
    p.called = c.called;
    p.programmed = now;
    p.smps = b.smps;
    p.failed = b.failed;
    stats_.record(p);
    if (c.mlid == 0) {
      ++stats_.reroutes;
    } else {
      ++stats_.calls;
      stats_.latency.add(now - c.called);
    }
  }
  ++stats_.batches;
  stats_.smps += b.smps;
  stats_.failed += b.failed;
  b.calls.clear();
  b.pending = b.smps = b.failed = 0;
  free_batches_.push_back(batch);
}

McastManager::Footprint McastManager::footprint() const {
  Footprint f;
  f.groups = groups_.size();
  for (const auto& [mlid, g] : groups_) {
    f.members += g.members.size();
    f.tree_nodes += g.nodes.size();
  }
  f.ports_in_groups = groups_of_.size();
  f.batch_slots = batches_.size();
  f.calls_waiting = unflushed_.size();
  for (const Batch& b : batches_) f.calls_waiting += b.calls.size();
  f.latency_bins = stats_.latency.bins();
  return f;
}

void McastManager::write(uint32_t sw, MftAddress a, uint32_t batch) {
  Batch& b = batches_[batch];
  if (sw >= subnet_.switch_paths.size()) {
    // No directed route to it: count it, and leave the shadow stale so the
    // next call tries again.
    ++smps_failed_;
    ++b.failed;
    return;
  }
  const uint64_t guid = subnet_.graph.switches[sw].guid;
  const MulticastForwardingTable content = shadow_.desired_block(guid, a);
  const uint64_t seq = shadow_.sent(guid, a, content);
  std::array<uint8_t, MulticastForwardingTable::kSize> data{};
  content.pack(data);
  ++smps_sent_;
  ++outstanding_;
  ++b.smps;
  ++b.pending;
  std::weak_ptr<bool> alive = alive_;
  sender_.set(subnet_.switch_paths[sw], MulticastForwardingTable::kAttributeId, mad::mft_attribute_modifier(a), data,
              [this, alive, guid, a, seq, batch](std::span<const uint8_t> smp, uint16_t status) {
                if (alive.expired()) return;
                answered(guid, a, seq, batch, !smp.empty() && status == 0);
              });
}

void McastManager::answered(uint64_t guid, MftAddress a, uint64_t seq, uint32_t batch, bool ok) {
  // An older write that landed after a newer one: write the block again
  // (a failed write is left for the next reroute, so a dead switch does not
  // make this loop).
  if (shadow_.answered(guid, a, seq, ok) && ok && !subnet_changed())
    if (auto it = index_.find(guid); it != index_.end()) write(it->second, a, batch);
  if (!ok) {
    ++smps_failed_;
    ++batches_[batch].failed;
  }
  smp_done(batch);
}

void McastManager::update_top(uint32_t sw, uint32_t batch) {
  const uint64_t guid = subnet_.graph.switches[sw].guid;
  const uint16_t top = shadow_.top(guid);
  auto [it, fresh] = tops_.try_emplace(guid, uint16_t{0xBFFF});
  if (it->second == top || sw >= subnet_.switch_paths.size()) return;
  it->second = top;
  const std::vector<uint8_t>& path = subnet_.switch_paths[sw];
  ++top_smps_;
  ++outstanding_;
  ++batches_[batch].pending;
  std::weak_ptr<bool> alive = alive_;
  sender_.get(path, mad::SwitchInfo::kAttributeId, 0,
              [this, alive, path, top, batch](std::span<const uint8_t> smp, uint16_t status) {
                if (alive.expired()) return;
                if (!smp.empty() && status == 0) {
                  mad::SwitchInfo si = mad::SwitchInfo::unpack(smp_data(smp));
                  si.multicast_fdb_top = top;
                  si.port_state_change = false;  // writing 1 would clear it
                  std::array<uint8_t, 64> data{};
                  si.pack(data);
                  ++top_smps_;
                  ++outstanding_;
                  ++batches_[batch].pending;
                  sender_.set(path, mad::SwitchInfo::kAttributeId, 0, data,
                              [this, alive, batch](std::span<const uint8_t>, uint16_t) {
                                if (!alive.expired()) smp_done(batch);
                              });
                }
                smp_done(batch);
              });
}

void McastManager::smp_done(uint32_t batch) {
  --outstanding_;
  --batches_[batch].pending;
  finish_if_done(batch);
  if (outstanding_ == 0) {
    std::vector<std::function<void()>> waiters;
    waiters.swap(waiters_);
    for (auto& w : waiters) w();
  }
}

// --- Queries ---

std::vector<uint64_t> McastManager::members(uint16_t mlid) const {
  std::vector<uint64_t> out;
  if (auto g = groups_.find(mlid); g != groups_.end())
    for (const auto& [guid, m] : g->second.members) out.push_back(guid);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<McastTreeInfo> McastManager::tree(uint16_t mlid) const {
  auto it = groups_.find(mlid);
  if (it == groups_.end() || it->second.members.empty()) return std::nullopt;
  const Group& g = it->second;
  McastTreeInfo info;
  info.mlid = mlid;
  info.members = g.attached;
  if (g.root == kNone || subnet_changed()) return info;
  info.routed = true;
  info.root = g.root;
  info.root_guid = subnet_.graph.switches[g.root].guid;
  info.switches = g.nodes.size();
  info.links = g.nodes.size() - 1;
  for (const auto& [sw, e] : g.edges) info.depth = std::max<unsigned>(info.depth, g.nodes.at(sw).depth);
  return info;
}

std::vector<McastTreeInfo> McastManager::trees() const {
  std::vector<McastTreeInfo> out;
  for (const auto& [mlid, g] : groups_)
    if (auto t = tree(mlid)) out.push_back(*t);
  return out;
}

McastLinkLoad McastManager::link_load() const {
  struct End {
    uint64_t guid;
    uint8_t port;
    auto operator<=>(const End&) const = default;
  };
  McastLinkLoad load;
  std::set<End> cables;
  const auto& sw = subnet_.graph.switches;
  for (const RoutingSwitch& s : sw)
    for (std::size_t p = 1; p < s.ports.size(); ++p) {
      const RoutingSwitch::Peer& peer = s.ports[p];
      if (peer.kind != RoutingSwitch::Peer::Kind::Switch || peer.sw >= sw.size()) continue;
      cables.insert(std::min(End{s.guid, static_cast<uint8_t>(p)}, End{sw[peer.sw].guid, peer.port}));
    }
  load.total = cables.size();
  if (subnet_changed()) return load;  // the trees are from before the subnet changed
  std::map<End, uint32_t> used;
  for (const auto& [mlid, g] : groups_)
    for (const auto& [s, n] : g.nodes)
      if (s != g.root) ++used[std::min(End{sw[s].guid, n.up_port}, End{sw[n.parent].guid, n.down_port})];
  uint64_t sum = 0;
  for (const auto& [end, count] : used) {
    load.max = std::max(load.max, count);
    sum += count;
    ++load.used;
  }
  load.mean = load.total ? static_cast<double>(sum) / static_cast<double>(load.total) : 0.0;
  return load;
}

}  // namespace ibfab::sm
