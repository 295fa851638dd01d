// Multicast policies alone, on the routing engines' test fabrics: root
// selection, the shortest-path tree's invariants, MLID allocators, join
// admission, and choosing each by name.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sm/mcast/mcast_policies.h"
#include "sm/mcast/mft_shadow.h"
#include "sm/routing/routing_engine.h"
#include "tests/sm/routing_fabric.h"

namespace ibfab::sm {
namespace {

using testing::TestFabric;

struct Routed {
  TestFabric f;
  RoutingOutput out;
};

Routed routed(const std::string& spec) {
  Routed r{testing::make_fabric(spec), {}};
  std::string error;
  EXPECT_TRUE(make_routing_engine("minhop")->route(r.f.in, r.out, error)) << error;
  return r;
}

McastEdge host(const TestFabric& f, std::size_t i) {  // end_ports[i] as a CA member
  return {f.end_ports[i].sw, f.end_ports[i].port, false};
}

std::vector<uint8_t> costs(const Routed& r, const std::vector<McastEdge>& members) {
  return root_costs(r.out, r.f.n(), members);
}

// fat-tree:2:8: end_ports in leaf order, four per leaf; switches L1..L8 are
// indices 0..7, spines S1..S4 are 8..11.
TEST(McastRoot, MinMaxHopPicksTheFirstSpineAcrossLeavesAndTheLeafWithinOne) {
  const Routed r = routed("fat-tree:2:8");
  MinMaxHopRoot sel;
  const std::vector<McastEdge> across = {host(r.f, 0), host(r.f, 5), host(r.f, 31)};
  const std::vector<uint8_t> c = costs(r, across);
  EXPECT_EQ(sel.select(c, {}), r.f.switch_named("S1"));
  EXPECT_EQ(c[r.f.switch_named("S3")], 2u);
  EXPECT_EQ(c[r.f.switch_named("L1")], 3u);
  EXPECT_EQ(sel.select(costs(r, {host(r.f, 4), host(r.f, 6)}), {}), r.f.switch_named("L2"));
  // A switch member costs no extra hop: L2 itself plus a host on L3.
  const std::vector<uint8_t> sw = costs(r, {{r.f.switch_named("L2"), 0, true}, host(r.f, 8)});
  EXPECT_EQ(sw[r.f.switch_named("L2")], 3u);
  EXPECT_EQ(sw[r.f.switch_named("S2")], 2u);
}

TEST(McastRoot, NoRootWhenAMemberIsUnreachable) {
  Routed r = routed("line:2");
  r.f.cut(0, 2);
  r.out = {};
  std::string error;
  ASSERT_TRUE(make_routing_engine("minhop")->route(r.f.in, r.out, error));
  const std::vector<McastEdge> m = {host(r.f, 0), host(r.f, 1)};
  EXPECT_EQ(costs(r, m), (std::vector<uint8_t>{kNoRoot, kNoRoot}));
  EXPECT_EQ(MinMaxHopRoot().select(costs(r, m), {}), std::nullopt);
  EXPECT_EQ(LeastLoadedRoot().select(costs(r, m), {}), std::nullopt);
  EXPECT_EQ(build_tree(ShortestPathTree(), r.f.in, r.out, 0, m), std::nullopt);
}

TEST(McastRoot, LeastLoadedAvoidsBusySwitchesWithinOneHop) {
  const Routed r = routed("fat-tree:2:8");
  LeastLoadedRoot sel;
  const std::vector<uint8_t> c = costs(r, {host(r.f, 0), host(r.f, 31)});  // L1, L8
  std::vector<uint32_t> load(r.f.n(), 1);
  EXPECT_EQ(sel.select(c, load), r.f.switch_named("S1"));  // all equal: cheapest, first
  load[r.f.switch_named("S1")] = 2;
  EXPECT_EQ(sel.select(c, load), r.f.switch_named("S2"));
  load[r.f.switch_named("L5")] = 0;  // cost 3: within one hop of 2
  EXPECT_EQ(sel.select(c, load), r.f.switch_named("L5"));
}

// Edge switches coming and going one at a time give the costs computed
// from scratch, on every topology.
TEST(McastRoot, IncrementalCostsMatchCostsFromScratch) {
  for (const std::string spec : {"fat-tree:2:8", "fat-tree:3:4", "ring:7", "torus:4x4"}) {
    SCOPED_TRACE(spec);
    const Routed r = routed(spec);
    RootCost cost(r.out, r.f.n());
    EdgeMap edges;
    std::vector<McastEdge> members;
    const auto expect_same = [&] { EXPECT_EQ(std::vector<uint8_t>(cost.costs().begin(), cost.costs().end()), costs(r, members)); };
    for (std::size_t i = 0; i < r.f.end_ports.size(); i += 2) {
      const McastEdge m = host(r.f, i);
      if (edges[m.sw].empty()) cost.add(m.sw, 1);
      ++edges[m.sw].ca;
      members.push_back(m);
      expect_same();
    }
    while (!members.empty()) {  // leave from the middle, so the far ends stay longest
      const McastEdge m = members[members.size() / 2];
      members.erase(members.begin() + static_cast<std::ptrdiff_t>(members.size() / 2));
      if (--edges[m.sw].ca == 0) {
        edges.erase(m.sw);
        cost.remove(m.sw, 1, edges);
      }
      if (!members.empty()) expect_same();
    }
  }
}

// Tree invariants (mcast_tree.h) and reachability of every member.
void expect_tree(const Routed& r, const McastTree& t, const std::vector<McastEdge>& members) {
  std::set<uint32_t> seen;
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const McastTree::Node& n = t.nodes[i];
    EXPECT_TRUE(seen.insert(n.sw).second) << "switch twice";
    if (i == 0) {
      EXPECT_EQ(n.parent, n.sw);
      EXPECT_EQ(n.depth, 0u);
      continue;
    }
    ASSERT_TRUE(seen.count(n.parent)) << "parent after child";
    const RoutingSwitch::Peer& up = r.f.in.switches[n.sw].ports.at(n.up_port);
    EXPECT_EQ(up.kind, RoutingSwitch::Peer::Kind::Switch);
    EXPECT_EQ(up.sw, n.parent);
    EXPECT_EQ(up.port, n.down_port);
    EXPECT_EQ(n.depth, t.find(n.parent)->depth + 1);
  }
  for (const McastEdge& m : members) EXPECT_NE(t.find(m.sw), nullptr);
}

TEST(McastTree, ShortestPathTreesAreTreesOnEveryTopology) {
  for (const std::string spec : {"fat-tree:2:8", "fat-tree:3:4", "ring:7", "torus:4x4", "line:5"}) {
    const Routed r = routed(spec);
    const std::size_t hosts = r.f.end_ports.size();
    for (std::size_t stride = 1; stride < hosts; stride += 3) {
      std::vector<McastEdge> m;
      for (std::size_t i = 0; i < hosts; i += stride) m.push_back(host(r.f, i));
      const std::optional<uint32_t> root = MinMaxHopRoot().select(costs(r, m), {});
      ASSERT_TRUE(root) << spec;
      const std::optional<McastTree> t = build_tree(ShortestPathTree(), r.f.in, r.out, *root, m);
      ASSERT_TRUE(t) << spec;
      EXPECT_EQ(t->root(), *root);
      SCOPED_TRACE(spec + " stride " + std::to_string(stride));
      expect_tree(r, *t, m);
      // The same tree whatever order the members come in.
      std::vector<McastEdge> reversed(m.rbegin(), m.rend());
      const std::optional<McastTree> again = build_tree(ShortestPathTree(), r.f.in, r.out, *root, reversed);
      ASSERT_TRUE(again);
      ASSERT_EQ(again->nodes.size(), t->nodes.size());
      for (std::size_t i = 0; i < t->nodes.size(); ++i) {
        EXPECT_EQ(again->nodes[i].sw, t->nodes[i].sw);
        EXPECT_EQ(again->nodes[i].parent, t->nodes[i].parent);
        EXPECT_EQ(again->nodes[i].up_port, t->nodes[i].up_port);
      }
    }
  }
}

TEST(McastTree, ShortestPathTakesTheLowestNumberedMinHopPort) {
  const Routed r = routed("fat-tree:2:8");
  // Rooted at L1, reaching L2: four spines are equally near; L2's port 5
  // (to S1) is the lowest.
  const std::vector<McastEdge> m = {host(r.f, 0), host(r.f, 4)};
  const auto t = build_tree(ShortestPathTree(), r.f.in, r.out, r.f.switch_named("L1"), m);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->nodes.size(), 3u);
  EXPECT_EQ(t->nodes[1].sw, r.f.switch_named("S1"));
  EXPECT_EQ(t->nodes[1].down_port, 5u);
  EXPECT_EQ(t->nodes[2].sw, r.f.switch_named("L2"));
  EXPECT_EQ(t->nodes[2].up_port, 5u);
  EXPECT_EQ(t->nodes[2].depth, 2u);
}

TEST(McastShadow, DiffsBlocksAndDistrustsFailedOrOvertakenWrites) {
  MftShadow sh;
  constexpr uint64_t kSw = 0x42;
  const mad::MftAddress b0{0, 0};
  EXPECT_TRUE(sh.stale(kSw, 2, std::nullopt).empty());  // never written: all zero, nothing wanted
  PortMask m;
  m.set(1);
  m.set(2);
  m.set(16);
  EXPECT_TRUE(sh.set_desired(kSw, 0xC001, m));
  EXPECT_FALSE(sh.set_desired(kSw, 0xC001, m));  // no change
  EXPECT_EQ(sh.stale(kSw, 2, std::nullopt), (std::vector<mad::MftAddress>{{0, 0}, {0, 1}}));
  EXPECT_EQ(sh.desired_block(kSw, b0).port_mask[1], 0x0006);
  const uint64_t first = sh.sent(kSw, b0, sh.desired_block(kSw, b0));
  sh.sent(kSw, {0, 1}, sh.desired_block(kSw, {0, 1}));
  EXPECT_TRUE(sh.stale(kSw, 2, std::nullopt).empty());
  EXPECT_EQ(sh.entries(), 1u);
  // A second write to block 0 overtakes the first: the first's late answer
  // makes the block unknown.
  PortMask zero;
  zero.set(0);
  sh.set_desired(kSw, 0xC002, zero);
  const uint64_t second = sh.sent(kSw, b0, sh.desired_block(kSw, b0));
  EXPECT_FALSE(sh.answered(kSw, b0, second, true));
  EXPECT_TRUE(sh.answered(kSw, b0, first, true));
  EXPECT_EQ(sh.stale(kSw, 2, uint16_t{0}), std::vector<mad::MftAddress>{b0});
  // Rewritten and confirmed: clean. A failed write: unknown again.
  const uint64_t third = sh.sent(kSw, b0, sh.desired_block(kSw, b0));
  EXPECT_FALSE(sh.answered(kSw, b0, third, true));
  EXPECT_TRUE(sh.stale(kSw, 2, std::nullopt).empty());
  const uint64_t fourth = sh.sent(kSw, b0, sh.desired_block(kSw, b0));
  EXPECT_TRUE(sh.answered(kSw, b0, fourth, false));
  EXPECT_EQ(sh.stale(kSw, 2, std::nullopt), std::vector<mad::MftAddress>{b0});
  // Dropping every entry: the written blocks must be cleared.
  sh.clear_desired();
  sh.sent(kSw, b0, {});
  EXPECT_EQ(sh.stale(kSw, 2, std::nullopt), (std::vector<mad::MftAddress>{{0, 1}}));
  // A rebooted switch is all-zero, which is what is wanted now.
  sh.forget(kSw);
  EXPECT_TRUE(sh.stale(kSw, 2, std::nullopt).empty());
}

TEST(McastMlid, LowestFreeHonoursARequestThenFillsFromTheBottom) {
  LowestFreeMlid a;
  const MlidRange range = MlidRange::for_cap(4);  // 0xC000..0xC003
  EXPECT_EQ(range.last, 0xC003);
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC000);
  EXPECT_EQ(a.allocate(0xC002, range), 0xC002);
  EXPECT_EQ(a.allocate(0xC002, range), 0xC001);
  EXPECT_EQ(a.allocate(0xBFFF, range), 0xC003);  // not multicast: ignored
  EXPECT_EQ(a.allocate(std::nullopt, range), std::nullopt);
  EXPECT_EQ(a.used(), 4u);
  a.free(0xC001);
  a.free(0xC001);
  EXPECT_EQ(a.used(), 3u);
  EXPECT_FALSE(a.in_use(0xC001));
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC001);
  EXPECT_EQ(a.allocate(std::nullopt, MlidRange::for_cap(0)), std::nullopt);
  EXPECT_EQ(MlidRange::for_cap(0xFFFF).last, 0xFFFE);
}

TEST(McastMlid, RoundRobinMovesOnAndWraps) {
  RoundRobinMlid a;
  const MlidRange range = MlidRange::for_cap(3);  // 0xC000..0xC002
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC000);
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC001);
  a.free(0xC000);
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC002);  // not the freed 0xC000 yet
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC000);  // wrapped
  EXPECT_EQ(a.allocate(std::nullopt, range), std::nullopt);
  a.free(0xC001);
  a.free(0xC002);
  EXPECT_EQ(a.allocate(0xC002, range), 0xC002);          // a request is honoured...
  EXPECT_EQ(a.allocate(std::nullopt, range), 0xC001);    // ...and does not move the cursor
}

TEST(McastAdmission, ParsesTheCapAndAppliesIt) {
  EXPECT_TRUE(make_join_admission("unlimited")->admit(1000000, false));
  const auto cap = make_join_admission("max-groups-per-port:2");
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->name(), "max-groups-per-port:2");
  EXPECT_TRUE(cap->admit(1, false));
  EXPECT_FALSE(cap->admit(2, false));
  EXPECT_TRUE(cap->admit(2, true));
  for (const char* bad : {"max-groups-per-port:", "max-groups-per-port:x", "max-groups-per-port:-1",
                          "max-groups-per-port:1234567890", "max-groups", "limited"})
    EXPECT_EQ(make_join_admission(bad), nullptr) << bad;
}

TEST(McastPolicyNames, EveryNameMakesAPolicyWithADescription) {
  for (auto n : root_selector_names()) {
    auto p = make_root_selector(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(p->name(), n);
    EXPECT_FALSE(p->description().empty());
  }
  for (auto n : tree_builder_names()) {
    auto p = make_tree_builder(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(p->name(), n);
    EXPECT_FALSE(p->description().empty());
  }
  for (auto n : mlid_allocator_names()) {
    auto p = make_mlid_allocator(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(p->name(), n);
    EXPECT_FALSE(p->description().empty());
  }
  EXPECT_FALSE(make_join_admission("max-groups-per-port:3")->description().empty());
  const McastPolicies d = McastPolicies::opensm();
  EXPECT_EQ(d.root->name(), "min-max-hop");
  EXPECT_EQ(d.tree->name(), "shortest-path");
  EXPECT_EQ(d.mlids->name(), "lowest-free");
  EXPECT_EQ(d.admission->name(), "unlimited");
  EXPECT_EQ(make_mcast_policies("least-loaded", "shortest-path", "round-robin").mlids->name(), "round-robin");
  try {
    make_mcast_policies("max-min-hop");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown multicast root selection 'max-min-hop' (known: min-max-hop, least-loaded)");
  }
  EXPECT_THROW(make_mcast_policies("min-max-hop", "steiner"), std::invalid_argument);
  EXPECT_THROW(make_mcast_policies("min-max-hop", "shortest-path", "highest"), std::invalid_argument);
  EXPECT_THROW(make_mcast_policies("min-max-hop", "shortest-path", "lowest-free", "some"), std::invalid_argument);
}

}  // namespace
}  // namespace ibfab::sm
