#include "sm/subnet_manager.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>
#include <unordered_set>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/forwarding_tables.h"
#include "fabric/mad/pkey_table.h"
#include "fabric/model/link_rate.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/switch_info.h"
#include "fabric/wire/mad_header.h"
#include "fabric/model/fabric.h"
#include "sm/partitions/pkey_assignment.h"

namespace ibfab::sm {
namespace {

using Block = std::array<uint8_t, 64>;

// The SA rate enum of the link PortInfo describes (active width x speed);
// 0 when PortInfo names no single rate.
uint8_t link_rate_enum(const mad::PortInfo& pi) {
  const auto r = fabric::LinkRate::from_port_info(pi.link_width_active, pi.link_speed_active, pi.link_speed_ext_active);
  return r ? r->sa_rate() : 0;
}

}  // namespace

SubnetManager::SubnetManager(fabric::Hca& hca, uint8_t port, SmOptions options)
    : hca_(hca),
      port_(port),
      options_(std::move(options)),
      sender_(hca, port, options_.smp),
      discovery_(sender_),
      engine_(make_routing_engine(options_.routing)) {
  if (!engine_) throw std::runtime_error("unknown routing engine '" + options_.routing + "'");
  // Policies are checked now (std::invalid_argument names the bad one).
  mcast_ = std::make_unique<McastManager>(
      subnet_, sender_,
      make_mcast_policies(options_.mcast_root, options_.mcast_tree, options_.mlid_allocator, options_.admission),
      options_.mcast_batch);
  if (options_.partition_config && !options_.groups.well_known)
    options_.groups.well_known = partitions::well_known_groups(*options_.partition_config);
  groups_ = std::make_unique<McastGroups>(subnet_, *mcast_, options_.groups);
  sa_ = std::make_unique<SaAgent>(hca, port, subnet_, *groups_);
  sa_->set_mft_view(mcast_.get());
  SmInfoAgent::Handlers h;
  h.info = [this] { return sm_info(); };
  h.set = [this](uint32_t modifier, const mad::SmInfo& from) { return on_sm_info_set(modifier, from); };
  h.trap = [this](const mad::Notice& n, const fabric::MadAddress&) { on_trap(n); };
  sm_info_agent_ = std::make_unique<SmInfoAgent>(hca, port, std::move(h));
  hca.set_is_sm(port, true);
}

SubnetManager::~SubnetManager() {
  hca_.fabric().sim().cancel(timer_);
  if (!stopped_) hca_.set_is_sm(port_, false);
}

sim::Progress& SubnetManager::progress() { return hca_.fabric().sim().progress(); }

uint16_t SubnetManager::lid_of(uint64_t port_guid) const {
  auto it = lids_.find(port_guid);
  return it == lids_.end() ? 0 : it->second;
}

void SubnetManager::keep_port_info(uint32_t node, uint8_t port, const mad::PortInfo& pi) {
  if (node >= building_.nodes.size() || port >= building_.nodes[node].ports.size()) return;
  SubnetNodePort& p = building_.nodes[node].ports[port];
  p.known = true;
  p.info = pi;
}

void SubnetManager::keep_switch_info(uint32_t routing_index, const mad::SwitchInfo& si) {
  if (routing_index >= switch_nodes_.size()) return;
  SubnetNode& n = building_.nodes[switch_nodes_[routing_index]];
  n.has_switch_info = true;
  n.switch_info = si;
}

uint64_t SubnetManager::phase_smps() {
  const uint64_t n = sender_.sent() - phase_start_smps_;
  phase_start_smps_ = sender_.sent();
  return n;
}

mad::SmInfo SubnetManager::sm_info() const {
  mad::SmInfo i;
  i.guid = hca_.port(port_).guid();
  i.sm_key = 0;
  i.act_count = static_cast<uint32_t>(sender_.sent());
  i.priority = static_cast<uint8_t>(options_.priority & 0xF);
  i.sm_state = state_;
  return i;
}

void SubnetManager::stamp_report() {
  report_.state = state_;
  report_.master = master();
  report_.remote_sms = remotes_.size();
  report_.master_since = master() ? master_since_ : sim::Time{};
  report_.master_guid = master() ? hca_.port(port_).guid()
                        : state_ == mad::sm_state::kStandby ? polled_.info.guid : 0;
  report_.heavy_sweeps = heavy_sweeps_;
  report_.light_sweeps = light_sweeps_;
  report_.polls = polls_;
  report_.failed_polls = failed_polls_;
}

// --- heavy sweep ---

void SubnetManager::sweep() {
  if (sweeping_ || stopped_) return;
  if (state_ != mad::sm_state::kMaster) state_ = mad::sm_state::kDiscovering;
  sweeping_ = true;
  up_ = false;
  report_ = SweepReport{};
  report_.started = hca_.fabric().sim().now();
  phase_start_smps_ = sender_.sent();
  progress().begin("discovery", "SMPs");
  const uint64_t retries = sender_.retries(), unanswered = sender_.unanswered();
  discovery_.start([this, retries, unanswered](const DiscoveryResult& r) {
    report_.retries = sender_.retries() - retries;
    report_.unanswered = sender_.unanswered() - unanswered;
    discovered(r);
  });
}

void SubnetManager::fail(const std::string& why) {
  report_.ok = false;
  report_.error = why;
  sweeping_ = false;
  stamp_report();
  // A running SM tries again at the next sweep interval.
  if (running_ && !stopped_) arm_timer(options_.sweep_interval);
}

void SubnetManager::discovered(const DiscoveryResult& r) {
  if (stopped_) {
    sweeping_ = false;
    return;
  }
  report_.discovered = hca_.fabric().sim().now();
  report_.nodes = r.nodes.size();
  report_.switches = r.switches();
  if (r.nodes.empty()) return fail("discovery found nothing (is the SM's port cabled?)");
  node_by_guid_.clear();
  for (uint32_t i = 0; i < r.nodes.size(); ++i) node_by_guid_.emplace(r.nodes[i].guid, i);
  // End ports, the SM's own first: LIDs are handed out in this order.
  end_ports_.clear();
  const DiscoveredNode& me = r.nodes[0];
  end_ports_.push_back(EndPort{0, port_, me.port_guids[port_]});
  for (uint32_t i = 0; i < r.nodes.size(); ++i) {
    const DiscoveredNode& n = r.nodes[i];
    if (n.is_switch()) {
      end_ports_.push_back(EndPort{i, 0, n.guid});
      continue;
    }
    for (uint8_t p = 1; p <= n.num_ports; ++p)
      if (n.port_guids[p] != 0 && !(i == 0 && p == port_)) end_ports_.push_back(EndPort{i, p, n.port_guids[p]});
  }
  report_.end_ports = end_ports_.size();
  read_ports();
}

void SubnetManager::read_ports() {
  // Every end port's P_KeyTable and PortInfo, before anything is written:
  // PortInfo says which ports have an SM (IsSM) and which LIDs they hold.
  const DiscoveryResult& r = discovery_.result();
  building_ = Subnet{};
  building_.lmc = options_.lmc;
  building_.nodes.resize(r.nodes.size());
  for (uint32_t i = 0; i < r.nodes.size(); ++i) {
    const DiscoveredNode& d = r.nodes[i];
    SubnetNode& n = building_.nodes[i];
    n.info = d.info;
    n.description = d.description;
    n.port_guids = d.port_guids;
    n.ports.resize(d.num_ports + 1u);
    for (std::size_t p = 0; p < d.port_info.size() && p < n.ports.size(); ++p)
      if (d.port_info_read[p]) n.ports[p] = SubnetNodePort{true, d.port_info[p], -1, 0};
    building_.node_by_guid.emplace(d.guid, i);
  }
  for (const DiscoveredLink& l : r.links) {
    const uint32_t a = node_by_guid_.at(l.a_guid), b = node_by_guid_.at(l.b_guid);
    if (l.a_port < building_.nodes[a].ports.size()) {
      building_.nodes[a].ports[l.a_port].peer_node = static_cast<int32_t>(b);
      building_.nodes[a].ports[l.a_port].peer_port = l.b_port;
    }
    if (l.b_port < building_.nodes[b].ports.size()) {
      building_.nodes[b].ports[l.b_port].peer_node = static_cast<int32_t>(a);
      building_.nodes[b].ports[l.b_port].peer_port = l.a_port;
    }
  }
  building_.ports.resize(end_ports_.size());
  read_pi_.assign(end_ports_.size(), mad::PortInfo{});
  read_ok_.assign(end_ports_.size(), false);
  pkey_reads_.clear();
  for (uint32_t i = 0; i < end_ports_.size(); ++i) {
    const EndPort& e = end_ports_[i];
    const DiscoveredNode& n = r.nodes[e.node];
    SubnetPort& sp = building_.ports[i];
    sp.guid = e.guid;
    sp.node_guid = n.guid;
    sp.lmc = e.port == 0 ? 0 : options_.lmc;
    sp.port = e.port;
    sp.is_switch = n.is_switch();
    sp.num_ports = n.num_ports;
    sp.partition_cap = n.partition_cap;
    sp.device_id = n.device_id;
    sp.vendor_id = n.vendor_id;
    sp.system_guid = n.system_guid;
    sp.description = n.description;
    building_.port_by_guid.emplace(sp.guid, i);
    // Every block of the table NodeInfo.PartitionCap says it has, as
    // OpenSM reads them (the SA lists them all).
    constexpr std::size_t kPer = mad::PKeyTable::kEntriesPerBlock;
    const std::size_t blocks = std::max<std::size_t>(1, (std::size_t{n.partition_cap} + kPer - 1) / kPer);
    sp.pkeys.assign(blocks * kPer, 0);
    for (uint32_t b = 0; b < blocks; ++b) pkey_reads_.push_back({i, b});
  }
  // Both passes are generated batches: nothing is stored per request until
  // it leaves (discovery_.result() stays as it is until the next sweep).
  sender_.generate(pkey_reads_.size(), [this](std::size_t k, SmpSender::Request& q) {
    const uint32_t i = pkey_reads_[k].first, b = pkey_reads_[k].second;
    q.method = mad::dr_smp::kMethodGet;
    q.attr = mad::PKeyTable::kAttributeId;
    q.modifier = b;
    q.path = DrRoute(discovery_.result().nodes[end_ports_[i].node].path);
    q.cb = [this, i, b](std::span<const uint8_t> smp, uint16_t st) {
      if (smp.empty() || st != 0) return;
      const auto t = mad::PKeyTable::unpack(smp_data(smp));
      const std::size_t at = std::size_t{b} * mad::PKeyTable::kEntriesPerBlock;
      std::copy(t.p_key.begin(), t.p_key.end(), building_.ports[i].pkeys.begin() + static_cast<std::ptrdiff_t>(at));
    };
  });
  sender_.generate(end_ports_.size(), [this](std::size_t k, SmpSender::Request& q) {
    const auto i = static_cast<uint32_t>(k);
    q.method = mad::dr_smp::kMethodGet;
    q.attr = mad::PortInfo::kAttributeId;
    q.modifier = end_ports_[i].port;
    q.path = DrRoute(discovery_.result().nodes[end_ports_[i].node].path);
    q.cb = [this, i](std::span<const uint8_t> smp, uint16_t st) {
      if (smp.empty() || st != 0) return;
      const mad::PortInfo pi = mad::PortInfo::unpack(smp_data(smp));
      keep_port_info(end_ports_[i].node, end_ports_[i].port, pi);
      building_.ports[i].neighbor_mtu = pi.neighbor_mtu;
      building_.ports[i].rate = link_rate_enum(pi);
      read_pi_[i] = pi;
      read_ok_[i] = true;
    };
  });
  sender_.when_idle([this] { elect(); });
}

void SubnetManager::elect() {
  if (stopped_) {
    sweeping_ = false;
    return;
  }
  const DiscoveryResult& r = discovery_.result();
  remotes_.clear();
  for (uint32_t i = 1; i < end_ports_.size(); ++i) {
    const EndPort& e = end_ports_[i];
    const DiscoveredNode& n = r.nodes[e.node];
    // SMInfo goes to the port the node's directed route enters by.
    if (!read_ok_[i] || n.is_switch() || e.port != n.entry_port) continue;
    if (!(read_pi_[i].capability_mask & mad::port_cap::kIsSM)) continue;
    sender_.get(n.path, mad::SmInfo::kAttributeId, 0, [this, path = n.path](std::span<const uint8_t> smp, uint16_t st) {
      if (smp.empty() || st != 0) return;
      const mad::SmInfo info = mad::SmInfo::unpack(smp_data(smp));
      if (info.sm_state != mad::sm_state::kNotActive) remotes_.push_back(RemoteSm{info, path});
    });
  }
  sender_.when_idle([this] { decide(); });
}

void SubnetManager::decide() {
  if (stopped_) {
    sweeping_ = false;
    return;
  }
  report_.smps_discovery = phase_smps();
  const mad::SmInfo me = sm_info();
  const RemoteSm* yield_to = nullptr;
  for (const RemoteSm& r : remotes_) {
    const bool better = mad::sm_outranks(r.info, me);
    const bool is_master = r.info.sm_state == mad::sm_state::kMaster;
    bool yields;
    if (state_ == mad::sm_state::kMaster) {
      yields = is_master && better;  // two masters: the lower one steps down
    } else {
      // Discovering: a master, whatever its rank, or a better discovering SM.
      yields = is_master || (better && r.info.sm_state == mad::sm_state::kDiscovering);
    }
    if (yields && (!yield_to || (is_master && yield_to->info.sm_state != mad::sm_state::kMaster))) yield_to = &r;
  }
  if (yield_to) {
    RemoteSm m = *yield_to;
    return become_standby(m);
  }
  become_master();
  program_pkeys();
}

void SubnetManager::assign_lids() {
  if (!still_master()) {
    sweeping_ = false;
    return;
  }
  const uint16_t stride = static_cast<uint16_t>(1u << options_.lmc);
  // LIDs in use: those this SM handed out, then those the ports already
  // hold (kept unless they clash), then new ones above both.
  std::unordered_set<uint16_t> used;
  auto take = [&](uint16_t base) {
    for (uint16_t k = 0; k < stride; ++k) used.insert(static_cast<uint16_t>(base + k));
    next_lid_ = std::max<uint16_t>(next_lid_, static_cast<uint16_t>(base + stride));
  };
  for (const auto& [guid, lid] : lids_) take(lid);
  for (uint32_t i = 0; i < end_ports_.size(); ++i) {
    const EndPort& e = end_ports_[i];
    if (lids_.count(e.guid) || !read_ok_[i]) continue;
    const uint16_t lid = read_pi_[i].lid;
    if (lid == 0 || lid % stride != 0 || lid + stride > 0xC000) continue;
    bool clash = false;
    for (uint16_t k = 0; k < stride; ++k) clash = clash || used.count(static_cast<uint16_t>(lid + k));
    if (clash) continue;
    lids_.emplace(e.guid, lid);
    take(lid);
  }
  for (const EndPort& e : end_ports_) {
    if (lids_.count(e.guid)) continue;
    next_lid_ = static_cast<uint16_t>((next_lid_ + stride - 1) / stride * stride);
    if (next_lid_ + stride > 0xC000) return fail("out of unicast LIDs");
    lids_.emplace(e.guid, next_lid_);
    next_lid_ = static_cast<uint16_t>(next_lid_ + stride);
  }
  own_lid_ = lids_.at(end_ports_[0].guid);
  const bool reregister = reregister_;
  building_.sm_lid = own_lid_;
  building_.sm_port_guid = end_ports_[0].guid;
  for (uint32_t i = 0; i < end_ports_.size(); ++i) {
    SubnetPort& sp = building_.ports[i];
    sp.lid = lids_.at(sp.guid);
    for (uint32_t k = 0; k < (1u << sp.lmc); ++k) building_.port_by_lid.emplace(static_cast<uint16_t>(sp.lid + k), i);
  }
  lid_sets_.clear();
  for (uint32_t i = 0; i < end_ports_.size(); ++i)
    if (read_ok_[i]) lid_sets_.push_back(i);
  progress().begin("LIDs", "SMPs", lid_sets_.size());
  sender_.generate(lid_sets_.size(), [this, reregister](std::size_t k, SmpSender::Request& q) {
    const EndPort& e = end_ports_[lid_sets_[k]];
    mad::PortInfo pi = read_pi_[lid_sets_[k]];
    pi.lid = lids_.at(e.guid);
    pi.lmc = options_.lmc;
    pi.master_sm_lid = own_lid_;
    pi.master_sm_sl = 0;
    pi.subnet_timeout = options_.subnet_timeout;
    pi.client_reregister = reregister && e.port != 0;
    pi.port_state = mad::port_state::kNoChange;
    q.method = mad::dr_smp::kMethodSet;
    q.attr = mad::PortInfo::kAttributeId;
    q.modifier = e.port;
    q.path = DrRoute(discovery_.result().nodes[e.node].path);
    pi.pack(q.data);
    q.cb = [this, node = e.node, port = e.port](std::span<const uint8_t> ans, uint16_t st) {
      if (!ans.empty() && st == 0) keep_port_info(node, port, mad::PortInfo::unpack(smp_data(ans)));
    };
  });
  sender_.when_idle([this] {
    report_.lids_set = hca_.fabric().sim().now();
    report_.smps_lids = phase_smps();
    reregister_ = false;
    program_routes();
  });
}

void SubnetManager::program_routes() {
  if (!still_master()) {
    sweeping_ = false;
    return;
  }
  const DiscoveryResult& r = discovery_.result();
  // The switch graph, indexed in discovery order.
  std::vector<int32_t> sw_index(r.nodes.size(), -1);
  RoutingInput in;
  for (uint32_t i = 0; i < r.nodes.size(); ++i) {
    const DiscoveredNode& n = r.nodes[i];
    if (!n.is_switch()) continue;
    sw_index[i] = static_cast<int32_t>(in.switches.size());
    RoutingSwitch s;
    s.guid = n.guid;
    s.lid = lids_.at(n.guid);
    s.lmc = 0;
    s.num_ports = n.num_ports;
    s.ports.resize(n.num_ports + 1u);
    in.switches.push_back(std::move(s));
  }
  auto connect = [&](uint32_t a, uint8_t ap, uint32_t b, uint8_t bp) {
    if (sw_index[a] < 0 || ap == 0 || ap >= in.switches[static_cast<uint32_t>(sw_index[a])].ports.size()) return;
    RoutingSwitch::Peer& peer = in.switches[static_cast<uint32_t>(sw_index[a])].ports[ap];
    if (sw_index[b] >= 0) {
      peer.kind = RoutingSwitch::Peer::Kind::Switch;
      peer.sw = static_cast<uint32_t>(sw_index[b]);
      peer.port = bp;
    } else {
      peer.kind = RoutingSwitch::Peer::Kind::Endport;
      peer.port = bp;
      peer.lid = lid_of(r.nodes[b].port_guids[bp]);
      peer.lmc = options_.lmc;
    }
  };
  for (const DiscoveredLink& l : r.links) {
    const uint32_t a = node_by_guid_.at(l.a_guid), b = node_by_guid_.at(l.b_guid);
    connect(a, l.a_port, b, l.b_port);
    connect(b, l.b_port, a, l.a_port);
  }
  in.max_lid = static_cast<uint16_t>(next_lid_ - 1);
  building_.graph = in;
  report_.max_lid = in.max_lid;
  std::string error;
  progress().begin("routing", "");
  const auto t0 = std::chrono::steady_clock::now();
  const bool ok = engine_->route(in, building_.routes, error);
  report_.routing_wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ok) return fail(std::string(engine_->name()) + ": " + error);

  // Where each end port attaches to the switch graph.
  for (SubnetPort& sp : building_.ports) {
    const uint32_t node = node_by_guid_.at(sp.node_guid);
    if (sw_index[node] >= 0) {
      sp.edge_switch = sw_index[node];
      sp.edge_port = 0;
    }
  }
  for (uint32_t s = 0; s < in.switches.size(); ++s)
    for (uint8_t p = 1; p < in.switches[s].ports.size(); ++p) {
      const RoutingSwitch::Peer& peer = in.switches[s].ports[p];
      if (peer.kind != RoutingSwitch::Peer::Kind::Endport) continue;
      const auto it = building_.port_by_lid.find(peer.lid);
      if (it == building_.port_by_lid.end()) continue;
      building_.ports[it->second].edge_switch = static_cast<int32_t>(s);
      building_.ports[it->second].edge_port = p;
    }
  building_.switch_paths.assign(in.switches.size(), {});
  building_.mcast_fdb_cap = 0xFFFF;
  switch_nodes_.assign(in.switches.size(), 0);
  for (uint32_t i = 0; i < r.nodes.size(); ++i)
    if (sw_index[i] >= 0) {
      building_.switch_paths[static_cast<uint32_t>(sw_index[i])] = r.nodes[i].path;
      building_.nodes[i].routing_index = sw_index[i];
      switch_nodes_[static_cast<uint32_t>(sw_index[i])] = i;
    }
  // Per switch, in discovery order: SwitchInfo (Get, then Set with
  // LinearFDBTop once the answer is in), then every LFT block up to the
  // top. The requests are made as they leave, from building_, which stays
  // as it is until the sender is idle again.
  const uint16_t top = in.max_lid;
  const std::size_t per_switch = 1 + top / 64u + 1;
  // (and the SwitchInfo Set each Get's answer brings)
  progress().begin("LFTs", "SMPs", in.switches.size() * (per_switch + 1));
  sender_.generate(in.switches.size() * per_switch, [this, top, per_switch](std::size_t i, SmpSender::Request& q) {
    const auto sw = static_cast<uint32_t>(i / per_switch);
    q.path = DrRoute(building_.switch_paths[sw]);
    const std::size_t k = i % per_switch;
    if (k == 0) {
      q.method = mad::dr_smp::kMethodGet;
      q.attr = mad::SwitchInfo::kAttributeId;
      q.cb = [this, sw, top](std::span<const uint8_t> smp, uint16_t st) {
        if (smp.empty() || st != 0) return;
        mad::SwitchInfo si = mad::SwitchInfo::unpack(smp_data(smp));
        building_.mcast_fdb_cap = std::min(building_.mcast_fdb_cap, si.multicast_fdb_cap);
        si.linear_fdb_top = top;
        Block b{};
        si.pack(b);
        sender_.set(building_.switch_paths[sw], mad::SwitchInfo::kAttributeId, 0, b,
                    [this, sw](std::span<const uint8_t> ans, uint16_t s2) {
                      if (ans.empty() || s2 != 0) return;
                      keep_switch_info(sw, mad::SwitchInfo::unpack(smp_data(ans)));
                    });
      };
      return;
    }
    const auto block = static_cast<uint32_t>(k - 1);
    const std::vector<uint8_t>& lft = building_.routes.lft[sw];
    const std::size_t first = std::size_t{block} * 64;
    q.method = mad::dr_smp::kMethodSet;
    q.attr = mad::LinearForwardingTable::kAttributeId;
    q.modifier = block;
    std::fill_n(q.data, 64, mad::LinearForwardingTable::kNoPort);
    if (first < lft.size())
      std::copy_n(lft.begin() + static_cast<std::ptrdiff_t>(first), std::min<std::size_t>(64, lft.size() - first), q.data);
  });
  sender_.when_idle([this] {
    report_.routed = hca_.fabric().sim().now();
    report_.smps_routing = phase_smps();
    activate(mad::port_state::kArmed);
  });
}

void SubnetManager::finish() {
  if (!still_master()) {
    sweeping_ = false;
    return;
  }
  // Ports that left the subnet leave their groups and subscriptions, and
  // subscribers hear of it (trap 65, GID out of service); ports that came
  // are announced by trap 64 (GID in service), as OpenSM does. Reports go
  // only to subscribers of the subnet as it was (a newcomer has none).
  std::vector<uint64_t> came;
  for (const SubnetPort& p : building_.ports)
    if (!subnet_.by_guid(p.guid)) came.push_back(p.guid);
  for (const SubnetPort& p : subnet_.ports) {
    if (building_.by_guid(p.guid)) continue;
    groups_->drop_port(p.guid);
    sa_->drop_port(p.guid);
    sa_->report(65, wire::Gid::from(subnet_.prefix, p.guid), std::nullopt);
  }
  building_.sms.clear();
  building_.sms.push_back(SubnetSm{building_.sm_port_guid, building_.sm_lid, sm_info()});
  for (const RemoteSm& rs : remotes_) {
    const SubnetPort* p = building_.by_guid(rs.info.guid);
    building_.sms.push_back(SubnetSm{rs.info.guid, p ? p->lid : uint16_t{0}, rs.info});
  }
  subnet_ = std::move(building_);
  mcast_->reroute_all();
  for (const uint64_t guid : came) sa_->report(64, wire::Gid::from(subnet_.prefix, guid), std::nullopt);
  sa_->set_serving(true);
  report_.up = hca_.fabric().sim().now();
  report_.smps = report_.smps_discovery + report_.smps_lids + report_.smps_routing + report_.smps_activation;
  report_.ok = true;
  sweeping_ = false;
  up_ = true;
  ++heavy_sweeps_;
  stamp_report();
  if (on_subnet_up) on_subnet_up(report_);
  if (!still_master()) return;  // on_subnet_up may stop the SM
  hand_over_if_outranked();
  if (resweep_) {
    arm_timer(sim::Time::zero());
  } else if (running_) {
    arm_timer(options_.sweep_interval);
  }
}

}  // namespace ibfab::sm
