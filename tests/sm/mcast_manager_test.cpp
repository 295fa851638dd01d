// The multicast manager against a real fabric: the SM's view is built from
// a hand-configured fabric, MFTs go out as SMPs from H1, and
// check_multicast follows the switches' real tables.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/model/mcast_check.h"
#include "fabric/topology/topology_spec.h"
#include "sm/mcast/mcast_manager.h"
#include "sm/routing/routing_engine.h"
#include "sim/rng.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::sm {
namespace {

// A fabric configured by hand, the Subnet an SM would have built from it
// (min-hop routes, directed routes from H1 port 1), and an SmpSender there.
struct Bed {
  explicit Bed(const std::string& spec) : topo(topo::load_topology(spec)), fabric(sim, topo) {
    fabric::testing::configure_by_hand(fabric);
    build_subnet();
    sender = std::make_unique<SmpSender>(*fabric.find_hca("H1"), 1, SmpSender::Options{});
  }

  void build_subnet() {
    std::vector<int32_t> sw_of(fabric.node_count(), -1);
    for (uint32_t i = 0; i < fabric.node_count(); ++i)
      if (fabric.node(i).is_switch()) {
        sw_of[i] = static_cast<int32_t>(node_of.size());
        node_of.push_back(i);
      }
    uint16_t max_lid = 0;
    for (const uint32_t i : node_of) {
      const fabric::Node& n = fabric.node(i);
      RoutingSwitch rs;
      rs.guid = n.guid();
      rs.lid = n.port(0).lid;
      rs.num_ports = n.num_ports();
      rs.ports.resize(n.num_ports() + 1u);
      for (uint8_t p = 1; p <= n.num_ports(); ++p) {
        const fabric::Port* peer = n.port(p).peer();
        if (!peer) continue;
        RoutingSwitch::Peer& out = rs.ports[p];
        out.port = peer->number();
        if (peer->node().is_switch()) {
          out.kind = RoutingSwitch::Peer::Kind::Switch;
          out.sw = static_cast<uint32_t>(sw_of[peer->node().index()]);
        } else {
          out.kind = RoutingSwitch::Peer::Kind::Endport;
          out.lid = peer->lid;
        }
      }
      subnet.graph.switches.push_back(std::move(rs));
    }
    for (uint32_t i = 0; i < fabric.node_count(); ++i) {
      const fabric::Node& n = fabric.node(i);
      const auto add = [&](SubnetPort sp) {
        const auto index = static_cast<uint32_t>(subnet.ports.size());
        subnet.port_by_guid[sp.guid] = index;
        subnet.port_by_lid[sp.lid] = index;
        max_lid = std::max(max_lid, sp.lid);
        subnet.ports.push_back(std::move(sp));
      };
      if (n.is_switch()) {
        SubnetPort sp;
        sp.guid = sp.node_guid = n.guid();
        sp.lid = n.port(0).lid;
        sp.is_switch = true;
        sp.edge_switch = sw_of[i];
        add(sp);
        continue;
      }
      for (uint8_t p = 1; p <= n.num_ports(); ++p) {
        SubnetPort sp;
        sp.guid = n.port(p).guid();
        sp.node_guid = n.guid();
        sp.lid = n.port(p).lid;
        sp.port = p;
        if (const fabric::Port* peer = n.port(p).peer(); peer && peer->node().is_switch()) {
          sp.edge_switch = sw_of[peer->node().index()];
          sp.edge_port = peer->number();
        }
        add(sp);
      }
    }
    subnet.graph.max_lid = max_lid;
    std::string error;
    auto engine = make_routing_engine("minhop");
    EXPECT_TRUE(engine && engine->route(subnet.graph, subnet.routes, error)) << error;
    // Directed routes: BFS over switches from H1's edge switch.
    subnet.switch_paths.assign(node_of.size(), {});
    const fabric::Port& h1 = fabric.find_hca("H1")->port(1);
    const auto first = static_cast<uint32_t>(sw_of[h1.peer()->node().index()]);
    std::vector<bool> seen(node_of.size(), false);
    std::deque<uint32_t> q{first};
    seen[first] = true;
    subnet.switch_paths[first] = {1};
    while (!q.empty()) {
      const uint32_t s = q.front();
      q.pop_front();
      const RoutingSwitch& rs = subnet.graph.switches[s];
      for (uint8_t p = 1; p < rs.ports.size(); ++p) {
        const RoutingSwitch::Peer& peer = rs.ports[p];
        if (peer.kind != RoutingSwitch::Peer::Kind::Switch || seen[peer.sw]) continue;
        seen[peer.sw] = true;
        subnet.switch_paths[peer.sw] = subnet.switch_paths[s];
        subnet.switch_paths[peer.sw].push_back(p);
        q.push_back(peer.sw);
      }
    }
    subnet.mcast_fdb_cap = fabric.options().multicast_fdb_cap;
  }

  // Index into subnet.ports of port 1 of HCA `name` (or port 0 of switch `name`).
  uint32_t port(const std::string& name) const {
    const fabric::Node* n = fabric.find(name);
    const uint64_t guid = n->is_switch() ? n->guid() : n->port(1).guid();
    return subnet.port_by_guid.at(guid);
  }
  std::vector<uint32_t> ports(const std::vector<std::string>& names) const {
    std::vector<uint32_t> out;
    for (const auto& n : names) out.push_back(port(n));
    return out;
  }
  const fabric::Port* fport(const std::string& name) const {
    fabric::Node* n = fabric.find(name);
    return &n->port(n->is_switch() ? 0 : 1);
  }
  // The fabric port behind Subnet::ports[index].
  const fabric::Port* fabric_port(uint32_t index) const {
    const SubnetPort& sp = subnet.ports[index];
    for (uint32_t i = 0; i < fabric.node_count(); ++i) {
      const fabric::Node& n = fabric.node(i);
      if (n.guid() != sp.node_guid) continue;
      return &n.port(sp.port);
    }
    return nullptr;
  }
  fabric::McastCheck check(uint16_t mlid, const std::vector<std::string>& names) const {
    std::vector<const fabric::Port*> ps;
    for (const auto& n : names) ps.push_back(fport(n));
    return fabric::check_multicast(fabric, mlid, ps);
  }
  // Names of the switch of subnet index `s`.
  std::string switch_name(uint32_t s) const { return fabric.node(node_of[s]).name(); }
  std::string root_name(const McastManager& m, uint16_t mlid) const {
    const std::optional<McastTreeInfo> t = m.tree(mlid);
    return t && t->routed ? switch_name(t->root) : "";
  }
  // MFT entries of `mlid` set anywhere in the real fabric.
  int real_entries(uint16_t mlid) const {
    int n = 0;
    for (const uint32_t i : node_of) {
      const auto& sw = static_cast<const fabric::Switch&>(fabric.node(i));
      for (uint8_t pos = 0; pos < sw.mft_positions(); ++pos) n += sw.mft(mlid, pos) != 0;
    }
    return n;
  }

  sim::Simulator sim;
  topo::Topology topo;
  fabric::Fabric fabric;
  Subnet subnet;
  std::vector<uint32_t> node_of;  // subnet switch index -> fabric node index
  std::unique_ptr<SmpSender> sender;
};

std::vector<std::string> hosts(int from, int to, int step = 1) {
  std::vector<std::string> v;
  for (int i = from; i <= to; i += step) v.push_back("H" + std::to_string(i));
  return v;
}

constexpr uint16_t kMlid = 0xC000;

// fat-tree:2:8: leaves L1..L8 (hosts H1-4 on L1, H5-8 on L2, ...), spines S1..S4.
class McastFatTree : public ::testing::Test {
 protected:
  McastFatTree() : bed("fat-tree:2:8") {}
  Bed bed;
};

TEST_F(McastFatTree, GroupsOfTwoThreeAndEveryHostReachExactlyTheirMembers) {
  McastManager m(bed.subnet, *bed.sender);
  const std::vector<std::vector<std::string>> groups = {{"H1", "H2"}, {"H1", "H6", "H30"}, hosts(1, 32)};
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto mlid = static_cast<uint16_t>(kMlid + g);
    m.set_members(mlid, bed.ports(groups[g]));
  }
  bed.sim.run();
  EXPECT_EQ(m.outstanding(), 0u);
  EXPECT_EQ(m.mft_smps_failed(), 0u);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto mlid = static_cast<uint16_t>(kMlid + g);
    const fabric::McastCheck c = bed.check(mlid, groups[g]);
    EXPECT_TRUE(c.ok) << "group " << g << ": " << c.problem;
    EXPECT_EQ(c.ports_reached, groups[g].size() * (groups[g].size() - 1));
  }
  // Per-call programming record: each was answered after it was called.
  ASSERT_EQ(m.programming().calls, 3u);
  ASSERT_EQ(m.programming().recent_size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const McastProgramming& p = m.programming().recent(i);
    ASSERT_TRUE(p.programmed.has_value());
    EXPECT_GT(p.smps, 0u);
    EXPECT_GT(p.latency()->ps(), 0);
  }
  // The all-hosts tree: a spine and every leaf, depth 1.
  const std::optional<McastTreeInfo> all = m.tree(kMlid + 2);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->members, 32u);
  EXPECT_EQ(all->switches, 9u);
  EXPECT_EQ(all->links, 8u);
  EXPECT_EQ(all->depth, 1u);
  EXPECT_EQ(bed.root_name(m, kMlid + 2), "S1");
}

TEST_F(McastFatTree, RemovingAMemberResendsOnlyTheChangedBlocks) {
  McastManager m(bed.subnet, *bed.sender);
  // A neighbour in the same MFT block, which must survive the rewrites.
  m.set_members(kMlid + 1, bed.ports({"H2", "H7"}));
  m.set_members(kMlid, bed.ports({"H1", "H5", "H9"}));  // root S1; S1, L1, L2, L3
  bed.sim.run();
  const uint64_t before = m.mft_smps_sent();
  EXPECT_EQ(m.programming().last().smps, 4u);  // block 0 of S1, L1, L2 (new entry 0) and L3
  m.set_members(kMlid, bed.ports({"H1", "H5"}));
  bed.sim.run();
  EXPECT_EQ(m.mft_smps_sent() - before, 2u);  // S1 loses its L3 port; L3 loses the entry
  EXPECT_EQ(bed.sender->unanswered(), 0u);
  EXPECT_TRUE(bed.check(kMlid, {"H1", "H5"}).ok) << bed.check(kMlid, {"H1", "H5"}).problem;
  EXPECT_TRUE(bed.check(kMlid + 1, {"H2", "H7"}).ok) << bed.check(kMlid + 1, {"H2", "H7"}).problem;
  const auto& l3 = *bed.fabric.find_switch("L3");
  EXPECT_EQ(l3.mft(kMlid, 0), 0u);
  // Same members again: nothing to send.
  m.set_members(kMlid, bed.ports({"H5", "H1", "H1"}));
  bed.sim.run();
  EXPECT_EQ(m.mft_smps_sent() - before, 2u);
  EXPECT_EQ(m.programming().last().smps, 0u);
  EXPECT_EQ(m.programming().last().latency()->ps(), 0);
}

// H1..H4 (on L1) then H5 (on L2) join 1 us apart. Unbatched, every change
// is programmed: L1 three times as H2..H4 arrive, then S1, L1 and L2. In a
// 5 us batch, only the end state: block 0 of S1, L1 and L2, once each.
TEST_F(McastFatTree, ChangesInOneBatchWriteEachBlockOnce) {
  const auto joins = [&](McastManager& m, uint16_t mlid) {
    for (int i = 0; i < 5; ++i) {
      const uint64_t guid = bed.subnet.ports[bed.port("H" + std::to_string(i + 1))].guid;
      bed.sim.schedule(sim::Time::us(i), [&m, mlid, guid] { m.add_member(mlid, guid); });
    }
    bed.sim.run();
  };
  McastManager each(bed.subnet, *bed.sender);
  joins(each, kMlid);
  EXPECT_EQ(each.mft_smps_sent(), 6u);
  McastManager batched(bed.subnet, *bed.sender, McastPolicies::opensm(), sim::Time::us(5));
  joins(batched, kMlid + 1);
  EXPECT_EQ(batched.mft_smps_sent(), 3u);
  ASSERT_EQ(batched.programming().recent_size(), 5u);
  EXPECT_EQ(batched.programming().batches, 1u);
  const McastProgramming& first = batched.programming().recent(0);
  EXPECT_GE(first.latency()->ps(), sim::Time::us(5).ps());
  EXPECT_EQ(batched.programming().latency.max(), *first.latency());
  for (std::size_t i = 0; i < 5; ++i) {
    const McastProgramming& p = batched.programming().recent(i);
    EXPECT_EQ(p.smps, 3u) << "the calls of one batch share its SMPs";
    EXPECT_EQ(p.programmed, first.programmed);
  }
  EXPECT_TRUE(bed.check(kMlid + 1, hosts(1, 5)).ok) << bed.check(kMlid + 1, hosts(1, 5)).problem;
}

// SwitchInfo.MulticastFDBTop follows the highest MLID in use on each switch
// (what ibroute -M reads), and goes back to 0xBFFF when the table empties.
TEST_F(McastFatTree, MulticastFdbTopFollowsTheHighestMlid) {
  McastManager m(bed.subnet, *bed.sender);
  m.set_members(kMlid, bed.ports({"H1", "H5"}));
  m.set_members(kMlid + 40, bed.ports({"H2", "H13"}));
  bed.sim.run();
  const auto& l1 = *bed.fabric.find_switch("L1");
  const auto& l2 = *bed.fabric.find_switch("L2");
  EXPECT_EQ(l1.mft_top, kMlid + 40) << "H1 and H2 both hang off L1";
  EXPECT_EQ(l2.mft_top, kMlid);
  EXPECT_GT(m.top_smps_sent(), 0u);
  m.set_members(kMlid + 40, {});
  m.set_members(kMlid, {});
  bed.sim.run();
  EXPECT_EQ(l1.mft_top, 0xBFFF);
  EXPECT_EQ(l2.mft_top, 0xBFFF);
  EXPECT_FALSE(l1.port_state_change) << "untouched by the read-modify-write";
}

TEST_F(McastFatTree, OneMemberClearsTheEntries) {
  McastManager m(bed.subnet, *bed.sender);
  m.set_members(kMlid, bed.ports({"H1", "H5", "H9"}));
  bed.sim.run();
  EXPECT_EQ(bed.real_entries(kMlid), 4);
  EXPECT_EQ(m.mft_entries(), 4u);
  m.set_members(kMlid, bed.ports({"H1"}));
  bed.sim.run();
  EXPECT_EQ(bed.real_entries(kMlid), 0);
  EXPECT_EQ(m.mft_entries(), 0u);
  ASSERT_TRUE(m.tree(kMlid));
  EXPECT_FALSE(m.tree(kMlid)->routed);
  EXPECT_TRUE(bed.check(kMlid, {"H1"}).ok);
  m.set_members(kMlid, {});
  EXPECT_FALSE(m.tree(kMlid));
  EXPECT_TRUE(m.members(kMlid).empty());
}

TEST_F(McastFatTree, MinMaxHopRootsAtASpineAcrossLeavesAndAtTheLeafWithinOne) {
  McastManager m(bed.subnet, *bed.sender);
  m.set_members(kMlid, bed.ports({"H1", "H12"}));
  m.set_members(kMlid + 1, bed.ports({"H1", "H2", "H4"}));
  bed.sim.run();
  EXPECT_EQ(bed.root_name(m, kMlid), "S1");  // every spine costs 2; the first wins
  EXPECT_EQ(m.tree(kMlid)->depth, 1u);
  EXPECT_EQ(bed.root_name(m, kMlid + 1), "L1");
  EXPECT_EQ(m.tree(kMlid + 1)->switches, 1u);
  EXPECT_EQ(m.tree(kMlid + 1)->depth, 0u);
  EXPECT_TRUE(bed.check(kMlid + 1, {"H1", "H2", "H4"}).ok);
}

TEST_F(McastFatTree, ASwitchPortZeroMemberGetsBitZero) {
  McastManager m(bed.subnet, *bed.sender);
  m.set_members(kMlid, bed.ports({"H1", "L2"}));
  bed.sim.run();
  const fabric::McastCheck c = bed.check(kMlid, {"H1", "L2"});
  EXPECT_TRUE(c.ok) << c.problem;
  EXPECT_EQ(bed.fabric.find_switch("L2")->mft(kMlid, 0) & 1u, 1u);
}

// Eight groups, each with one host on each of two leaves.
std::vector<std::vector<std::string>> eight_groups() {
  std::vector<std::vector<std::string>> g;
  for (int i = 0; i < 8; ++i) g.push_back({"H" + std::to_string(1 + i % 4), "H" + std::to_string(5 + 4 * (i % 7))});
  return g;
}

TEST_F(McastFatTree, LeastLoadedSpreadsRootsAndLinkLoad) {
  McastManager opensm(bed.subnet, *bed.sender);
  McastManager spread(bed.subnet, *bed.sender, make_mcast_policies("least-loaded"));
  const auto groups = eight_groups();
  std::set<std::string> opensm_roots, spread_roots;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto mlid = static_cast<uint16_t>(kMlid + i);
    opensm.set_members(mlid, bed.ports(groups[i]));
    opensm_roots.insert(bed.root_name(opensm, mlid));
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto mlid = static_cast<uint16_t>(kMlid + 0x100 + i);
    spread.set_members(mlid, bed.ports(groups[i]));
    spread_roots.insert(bed.root_name(spread, mlid));
  }
  bed.sim.run();
  EXPECT_EQ(opensm_roots, std::set<std::string>{"S1"});
  EXPECT_GE(spread_roots.size(), 4u);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const fabric::McastCheck c = bed.check(static_cast<uint16_t>(kMlid + 0x100 + i), groups[i]);
    EXPECT_TRUE(c.ok) << i << ": " << c.problem;
  }
  const McastLinkLoad a = opensm.link_load(), b = spread.link_load();
  EXPECT_EQ(a.total, 32u);  // 8 leaves x 4 spines
  EXPECT_EQ(a.max, 8u);     // every tree hangs from S1, and H1..H4 sit on L1
  EXPECT_LT(b.max, a.max);
  EXPECT_GT(b.used, a.used);
  EXPECT_DOUBLE_EQ(a.mean, 16.0 / 32.0);  // 8 trees x 2 links
}

TEST_F(McastFatTree, RerouteAllSendsNothingNewUntilASwitchForgetsItsTable) {
  McastManager m(bed.subnet, *bed.sender);
  m.set_members(kMlid, bed.ports({"H1", "H5", "H9"}));
  m.set_members(kMlid + 40, bed.ports({"H2", "H13"}));  // block 1
  bed.sim.run();
  uint64_t sent = m.mft_smps_sent();
  m.reroute_all();
  EXPECT_EQ(m.mft_smps_sent(), sent);
  // L1 reboots: its MFT is gone; the SM is told and reroutes.
  fabric::Node& l1 = *bed.fabric.find("L1");
  bed.fabric.set_node_up(l1, false);
  bed.fabric.set_node_up(l1, true);
  fabric::testing::configure_by_hand(bed.fabric);  // LIDs and port states back, as a sweep would
  EXPECT_FALSE(bed.check(kMlid, {"H1", "H5", "H9"}).ok);
  m.forget_switch(l1.guid());
  bool programmed = false;
  m.reroute_all();
  m.when_programmed([&] { programmed = true; });
  EXPECT_FALSE(programmed);
  EXPECT_EQ(m.mft_smps_sent() - sent, 2u);  // L1's blocks 0 and 1
  bed.sim.run();
  EXPECT_TRUE(programmed);
  EXPECT_TRUE(bed.check(kMlid, {"H1", "H5", "H9"}).ok) << bed.check(kMlid, {"H1", "H5", "H9"}).problem;
  EXPECT_TRUE(bed.check(kMlid + 40, {"H2", "H13"}).ok);
  bool again = false;
  m.when_programmed([&] { again = true; });
  EXPECT_TRUE(again);  // nothing outstanding: at once
}

TEST_F(McastFatTree, WritesThatFailAreRetriedByTheNextReroute) {
  McastManager m(bed.subnet, *bed.sender);
  // S1 is reached through L1 port 5: take that cable down.
  fabric::Switch& l1 = *bed.fabric.find_switch("L1");
  bed.fabric.set_link_up(*l1.port(5).link(), false);
  m.set_members(kMlid, bed.ports({"H1", "H5"}));
  bed.sim.run();
  EXPECT_EQ(m.mft_smps_failed(), 2u);  // S1 and L2 (its route runs through S1)
  EXPECT_EQ(m.programming().last().failed, 2u);
  EXPECT_TRUE(m.programming().last().programmed.has_value());
  bed.fabric.set_link_up(*l1.port(5).link(), true);
  fabric::testing::configure_by_hand(bed.fabric);
  const uint64_t sent = m.mft_smps_sent();
  m.reroute_all();
  EXPECT_EQ(m.mft_smps_sent() - sent, 2u);
  bed.sim.run();
  EXPECT_EQ(m.programming().last().failed, 0u);
  EXPECT_TRUE(bed.check(kMlid, {"H1", "H5"}).ok) << bed.check(kMlid, {"H1", "H5"}).problem;
}

TEST_F(McastFatTree, MetricsCountEntriesPerSwitch) {
  McastManager m(bed.subnet, *bed.sender);
  m.set_members(kMlid, bed.ports({"H1", "H5"}));
  m.set_members(kMlid + 1, bed.ports({"H2", "H6"}));
  const auto per = m.mft_entries_per_switch();
  EXPECT_EQ(per.at(bed.fabric.find("L1")->guid()), 2u);
  EXPECT_EQ(per.at(bed.fabric.find("S1")->guid()), 2u);
  EXPECT_EQ(m.mft_entries(), 6u);
  EXPECT_EQ(m.trees().size(), 2u);
  PortMask l1;
  l1.set(1);
  l1.set(5);
  EXPECT_EQ(m.mft(bed.fabric.find("L1")->guid(), kMlid), l1);
}

TEST_F(McastFatTree, MlidsComeFromThePolicyWithinTheCap) {
  McastManager m(bed.subnet, *bed.sender);
  EXPECT_EQ(m.mlid_range().last, 0xC000 + 4095);
  EXPECT_EQ(m.allocate_mlid(std::nullopt), 0xC000);
  EXPECT_EQ(m.allocate_mlid(0xC005), 0xC005);
  EXPECT_EQ(m.allocate_mlid(0xC005), 0xC001);  // taken: lowest free
  EXPECT_EQ(m.allocate_mlid(0xF000), 0xC002);  // beyond the cap
  m.set_members(0xC001, bed.ports({"H1", "H5"}));
  m.free_mlid(0xC001);  // also drops the tree
  EXPECT_FALSE(m.tree(0xC001));
  bed.sim.run();
  EXPECT_EQ(bed.real_entries(0xC001), 0);
  EXPECT_EQ(m.allocate_mlid(std::nullopt), 0xC001);
  EXPECT_THROW(m.set_members(0xBFFF, {}), std::out_of_range);
  EXPECT_THROW(m.set_members(0xFFFF, {}), std::out_of_range);
  m.set_members(0xF000, bed.ports({"H1", "H5"}));  // beyond the cap: members kept, no tree
  EXPECT_EQ(m.members(0xF000).size(), 2u);
  EXPECT_FALSE(m.tree(0xF000)->routed);
  EXPECT_THROW(m.set_members(0xC000, {9999}), std::out_of_range);
}

TEST_F(McastFatTree, AdmissionCapsGroupsPerPort) {
  McastManager m(bed.subnet, *bed.sender, make_mcast_policies("min-max-hop", "shortest-path", "lowest-free",
                                                               "max-groups-per-port:2"));
  const uint32_t h1 = bed.port("H1");
  EXPECT_TRUE(m.admit(h1, kMlid));
  m.set_members(kMlid, bed.ports({"H1", "H5"}));
  m.set_members(kMlid + 1, bed.ports({"H1", "H9"}));
  EXPECT_FALSE(m.admit(h1, kMlid + 2));
  EXPECT_TRUE(m.admit(h1, kMlid + 1));  // already a member
  EXPECT_TRUE(m.admit(bed.port("H5"), kMlid + 2));
  EXPECT_FALSE(m.admit(99999, kMlid));
  m.set_members(kMlid, bed.ports({"H5", "H9"}));
  EXPECT_TRUE(m.admit(h1, kMlid + 2));
  McastManager open(bed.subnet, *bed.sender);
  for (uint16_t i = 0; i < 5; ++i) open.set_members(static_cast<uint16_t>(kMlid + i), bed.ports({"H1", "H2"}));
  EXPECT_TRUE(open.admit(h1, kMlid + 9));
}

// On a ring, min-hop paths meet again; the tree must stay a tree.
TEST(McastRing, TreesOnARingHaveNoLoop) {
  Bed bed("ring:6");
  McastManager m(bed.subnet, *bed.sender);
  const std::vector<std::vector<std::string>> groups = {
      {"H1", "H4"}, {"H1", "H3", "H5"}, hosts(1, 6), {"H2", "H6"}, {"H3", "H4", "H5", "H6"}};
  for (std::size_t g = 0; g < groups.size(); ++g) m.set_members(static_cast<uint16_t>(kMlid + g), bed.ports(groups[g]));
  bed.sim.run();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const fabric::McastCheck c = bed.check(static_cast<uint16_t>(kMlid + g), groups[g]);
    EXPECT_TRUE(c.ok) << g << ": " << c.problem;
  }
}

TEST(McastTorus, EveryPairAndTheWholeTorusWork) {
  Bed bed("torus:3x3");
  McastManager m(bed.subnet, *bed.sender);
  uint16_t mlid = kMlid;
  std::vector<std::pair<uint16_t, std::vector<std::string>>> groups;
  for (int a = 1; a <= 9; ++a)
    for (int b = a + 1; b <= 9; b += 3) groups.push_back({mlid++, {"H" + std::to_string(a), "H" + std::to_string(b)}});
  groups.push_back({mlid++, hosts(1, 9)});
  groups.push_back({mlid++, hosts(1, 9, 2)});
  for (const auto& [id, names] : groups) m.set_members(id, bed.ports(names));
  bed.sim.run();
  for (const auto& [id, names] : groups) {
    const fabric::McastCheck c = bed.check(id, names);
    EXPECT_TRUE(c.ok) << id << ": " << c.problem;
  }
}

// Members joining and leaving one at a time (add_member / remove_member)
// leave the manager wanting exactly the MFTs and trees that a second
// manager, given only the final member lists, builds from scratch; and the
// switches, once the SMPs are in, forward to exactly the members.
TEST(McastIncremental, OneAtATimeMatchesFromScratch) {
  for (const std::string spec : {"fat-tree:2:8", "fat-tree:3:4", "torus:3x3", "ring:6"}) {
    SCOPED_TRACE(spec);
    Bed bed(spec), scratch(spec);
    McastManager m(bed.subnet, *bed.sender);
    std::vector<uint32_t> candidates;  // every end port, switches' port 0 included
    for (uint32_t i = 0; i < bed.subnet.ports.size(); ++i) candidates.push_back(i);
    sim::Rng rng(3);
    std::map<uint16_t, std::set<uint32_t>> members;
    for (int step = 1; step <= 400; ++step) {
      const auto mlid = static_cast<uint16_t>(kMlid + rng.below(4));
      const uint32_t port = candidates[rng.below(candidates.size())];
      const uint64_t guid = bed.subnet.ports[port].guid;
      if (members[mlid].erase(port)) {
        m.remove_member(mlid, guid);
      } else {
        members[mlid].insert(port);
        m.add_member(mlid, guid);
      }
      if (step % 25 != 0) continue;
      McastManager fresh(scratch.subnet, *scratch.sender);
      for (const auto& [id, ports] : members) fresh.set_members(id, {ports.begin(), ports.end()});
      for (const auto& [id, ports] : members) {
        const std::optional<McastTreeInfo> a = m.tree(id), b = fresh.tree(id);
        ASSERT_EQ(a.has_value(), b.has_value()) << "step " << step;
        if (!a) continue;
        EXPECT_EQ(a->routed, b->routed);
        EXPECT_EQ(a->root, b->root) << "step " << step;
        EXPECT_EQ(a->switches, b->switches);
        EXPECT_EQ(a->depth, b->depth);
        for (const RoutingSwitch& sw : bed.subnet.graph.switches)
          EXPECT_EQ(m.mft(sw.guid, id), fresh.mft(sw.guid, id)) << "step " << step << " mlid " << id;
      }
      EXPECT_EQ(m.mft_entries(), fresh.mft_entries());
    }
    bed.sim.run();
    EXPECT_EQ(m.mft_smps_failed(), 0u);
    for (const auto& [id, ports] : members) {
      std::vector<const fabric::Port*> at;
      for (const uint32_t p : ports) at.push_back(bed.fabric_port(p));
      const fabric::McastCheck c = fabric::check_multicast(bed.fabric, id, at);
      EXPECT_TRUE(c.ok) << id << ": " << c.problem;
    }
  }
}

TEST(McastLifetime, AnswersAfterTheManagerIsGoneAreIgnored) {
  Bed bed("fat-tree:2:4");
  {
    McastManager m(bed.subnet, *bed.sender);
    m.set_members(kMlid, bed.ports({"H1", "H8"}));
    m.reroute_all();  // sends at once
    EXPECT_GT(m.outstanding(), 0u);
  }
  bed.sim.run();
  EXPECT_TRUE(bed.check(kMlid, {"H1", "H8"}).ok);
}

}  // namespace
}  // namespace ibfab::sm
