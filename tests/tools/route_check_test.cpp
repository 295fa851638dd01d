// The route check (tools/scenario/route_check.h): every host-facing
// switch's LFT delivers every LID. Its verdicts are compared with a plain
// walk of each (switch, LID) pair on fabrics whose LFTs are damaged on
// purpose: drops, loops, wrong end ports, cables down.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"
#include "tools/scenario/route_check.h"

namespace ibfab::scenario {
namespace {

using fabric::Node;
using fabric::Port;
using fabric::Switch;

// The oracle: one walk per pair, at most 64 hops (more is a loop on these
// fabrics, whose diameter is far less).
RouteCheck walk_every_pair(const fabric::Fabric& f) {
  RouteCheck c;
  std::vector<std::pair<uint16_t, const Node*>> targets;
  std::vector<const Switch*> sources;
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    const Node& n = f.node(i);
    if (!n.up()) continue;
    if (n.is_switch()) {
      bool hosts = false;
      for (uint8_t p = 1; p <= n.num_ports(); ++p)
        hosts |= n.port(p).peer() && n.port(p).link_up() && !n.port(p).peer()->node().is_switch();
      if (hosts) sources.push_back(static_cast<const Switch*>(&n));
      if (n.port(0).lid) targets.emplace_back(n.port(0).lid, &n);
      continue;
    }
    for (uint8_t p = 1; p <= n.num_ports(); ++p) {
      if (!n.port(p).link_up()) continue;
      if (n.port(p).state() != fabric::PortState::Active || !n.port(p).lid) {
        ++c.ports_not_active;
        continue;
      }
      targets.emplace_back(n.port(p).lid, &n);
    }
  }
  for (const Switch* s : sources) {
    for (auto [lid, node] : targets) {
      ++c.checked;
      const Switch* at = s;
      bool ok = false;
      for (int hop = 0; hop < 64; ++hop) {
        const uint8_t out = at->lft(lid);
        if (out == 0) {
          ok = at == node;
          break;
        }
        if (out > at->num_ports() || !at->port(out).link_up()) break;
        const Port* peer = at->port(out).peer();
        if (peer->node().is_switch()) {
          at = static_cast<const Switch*>(&peer->node());
          continue;
        }
        ok = &peer->node() == node && peer->owns_lid(lid);
        break;
      }
      c.broken += !ok;
    }
  }
  return c;
}

class RouteCheckTest : public ::testing::Test {
 protected:
  explicit RouteCheckTest(const char* spec = "fat-tree:3:4") : topo(topo::load_topology(spec)), f(sim, topo) {
    fabric::testing::configure_by_hand(f);
  }
  uint16_t lid_of(const std::string& host) { return f.find_hca(host)->port(1).lid; }
  std::size_t host_facing_switches() {
    std::size_t n = 0;
    for (uint32_t i = 0; i < f.node_count(); ++i) {
      const Node& s = f.node(i);
      bool hosts = false;
      for (uint8_t p = 1; s.is_switch() && p <= s.num_ports(); ++p)
        hosts |= s.port(p).peer() && !s.port(p).peer()->node().is_switch();
      n += hosts;
    }
    return n;
  }
  void expect_same_as_the_oracle(const char* what) {
    const RouteCheck got = check_unicast_routes(f);
    const RouteCheck want = walk_every_pair(f);
    EXPECT_EQ(got.checked, want.checked) << what;
    EXPECT_EQ(got.broken, want.broken) << what;
    EXPECT_EQ(got.ports_not_active, want.ports_not_active) << what;
  }
  // The port of `from` cabled to `to`, 0 if none.
  uint8_t port_to(const Node& from, const Node& to) {
    for (uint8_t p = 1; p <= from.num_ports(); ++p)
      if (from.port(p).peer() && &from.port(p).peer()->node() == &to) return p;
    return 0;
  }
  // A switch cabled to `s` by a port other than the one it reaches `lid` by.
  std::pair<Switch*, uint8_t> other_switch_neighbour(Switch& s, uint16_t lid) {
    for (uint8_t p = 1; p <= s.num_ports(); ++p) {
      Port* peer = s.port(p).peer();
      if (p != s.lft(lid) && peer && peer->node().is_switch()) return {static_cast<Switch*>(&peer->node()), p};
    }
    return {nullptr, 0};
  }

  sim::Simulator sim;
  topo::Topology topo;
  fabric::Fabric f;
};

TEST_F(RouteCheckTest, ARoutedFabricHasEveryPairDelivered) {
  const RouteCheck c = check_unicast_routes(f);
  EXPECT_EQ(c.checked, host_facing_switches() * f.node_count()) << "one LID per node on this fabric";
  EXPECT_EQ(c.broken, 0u);
  EXPECT_EQ(c.ports_not_active, 0u);
  expect_same_as_the_oracle("as routed");
}

TEST_F(RouteCheckTest, ADroppingEntryBreaksExactlyTheWalksThatCrossIt) {
  Switch& leaf = static_cast<Switch&>(f.find_hca("H1")->port(1).peer()->node());
  const uint16_t far = lid_of("H" + std::to_string(topo.hca_count()));
  leaf.set_lft(far, Switch::kNoRoute);
  EXPECT_EQ(check_unicast_routes(f).broken, 1u) << "only the leaf itself walks through its own entry";
  expect_same_as_the_oracle("one leaf drops");
  // A switch above the leaves: every leaf whose route crosses it breaks.
  Switch& up = static_cast<Switch&>(leaf.port(leaf.lft(lid_of("H" + std::to_string(topo.hca_count() - 1)))).peer()->node());
  up.set_lft(lid_of("H" + std::to_string(topo.hca_count() - 1)), Switch::kNoRoute);
  const RouteCheck c = check_unicast_routes(f);
  EXPECT_GT(c.broken, 1u);
  expect_same_as_the_oracle("an upper switch drops too");
}

TEST_F(RouteCheckTest, ALoopBetweenTwoSwitchesIsBroken) {
  Switch& leaf = static_cast<Switch&>(f.find_hca("H1")->port(1).peer()->node());
  const uint16_t far = lid_of("H" + std::to_string(topo.hca_count()));
  Switch& up = static_cast<Switch&>(leaf.port(leaf.lft(far)).peer()->node());
  up.set_lft(far, port_to(up, leaf));  // back down to the leaf, which sends it up again
  const RouteCheck c = check_unicast_routes(f);
  EXPECT_GE(c.broken, 1u);
  expect_same_as_the_oracle("a two-switch loop");
}

TEST_F(RouteCheckTest, AnEntryToTheWrongHostOrAnotherSwitchIsBroken) {
  Switch& leaf = static_cast<Switch&>(f.find_hca("H1")->port(1).peer()->node());
  leaf.set_lft(lid_of("H1"), port_to(leaf, *f.find_hca("H2")));
  EXPECT_EQ(check_unicast_routes(f).broken, host_facing_switches())
      << "H1's leaf hands H1's LID to H2, and every walk to H1 ends at that leaf";
  expect_same_as_the_oracle("to the wrong host");
  Switch& other = *other_switch_neighbour(leaf, leaf.port(0).lid).first;
  other.set_lft(other.port(0).lid, port_to(other, leaf));  // a switch LID sent away from its switch
  expect_same_as_the_oracle("a switch LID sent elsewhere");
  EXPECT_GT(check_unicast_routes(f).broken, host_facing_switches());
}

TEST_F(RouteCheckTest, ACableDownBreaksItsWalksAndLeavesItsHostOut) {
  fabric::Hca& h1 = *f.find_hca("H1");
  f.set_link_up(*h1.port(1).link(), false);
  expect_same_as_the_oracle("H1's cable down");
  Switch& leaf = static_cast<Switch&>(f.find_hca("H2")->port(1).peer()->node());
  const uint16_t far = lid_of("H" + std::to_string(topo.hca_count()));
  f.set_link_up(*leaf.port(leaf.lft(far)).link(), false);
  const RouteCheck c = check_unicast_routes(f);
  EXPECT_GE(c.broken, 1u) << "the leaf's way up to the far host is down";
  expect_same_as_the_oracle("an up-link down");
}

TEST_F(RouteCheckTest, RandomDamageAgreesWithAWalkOfEveryPair) {
  std::mt19937 rng(7);
  std::vector<Switch*> switches;
  for (uint32_t i = 0; i < f.node_count(); ++i)
    if (f.node(i).is_switch()) switches.push_back(static_cast<Switch*>(&f.node(i)));
  std::size_t broken_seen = 0;
  for (int round = 0; round < 200; ++round) {
    Switch& s = *switches[rng() % switches.size()];
    const uint16_t lid = static_cast<uint16_t>(1 + rng() % f.node_count());
    s.set_lft(lid, static_cast<uint8_t>(rng() % (s.num_ports() + 2)));  // 0..num_ports+1: down, out of range too
    const RouteCheck got = check_unicast_routes(f);
    const RouteCheck want = walk_every_pair(f);
    ASSERT_EQ(got.broken, want.broken) << "after " << round + 1 << " changes";
    ASSERT_EQ(got.checked, want.checked);
    broken_seen = got.broken;
  }
  EXPECT_GT(broken_seen, 0u) << "the damage broke something";
}

}  // namespace
}  // namespace ibfab::scenario
