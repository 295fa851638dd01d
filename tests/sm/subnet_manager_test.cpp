// The SM brings a fabric up through SMPs alone; the tests then look at the
// fabric itself (not at the SM's view) to check what it did.
#include "sm/subnet_manager.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"

namespace ibfab::sm {
namespace {

struct Bringup {
  sim::Simulator sim;
  topo::Topology topology;
  fabric::Fabric fabric;
  SubnetManager sm;
  bool up = false;
  SweepReport report;

  Bringup(const std::string& spec, const std::string& routing = "minhop")
      : topology(topo::load_topology(spec)), fabric(sim, topology), sm(*fabric.find_hca("H1"), 1, options(routing)) {
    sm.on_subnet_up = [this](const SweepReport& r) {
      up = true;
      report = r;
    };
  }
  static SmOptions options(const std::string& routing) {
    SmOptions o;
    o.routing = routing;
    return o;
  }
  void run() {
    sm.sweep();
    sim.run();
  }
  // Follows LFTs from the switch next to `from` to `lid`; the node reached.
  const fabric::Node* walk(const fabric::Hca& from, uint16_t lid) {
    const fabric::Port* at = from.port(1).peer();
    for (int hop = 0; hop < 64 && at; ++hop) {
      const auto& sw = static_cast<const fabric::Switch&>(at->node());
      const uint8_t out = sw.lft(lid);
      if (out == 0) return &sw;
      if (out > sw.num_ports()) return nullptr;
      const fabric::Port* next = sw.port(out).peer();
      if (!next) return nullptr;
      if (!next->node().is_switch()) return &next->node();
      at = next;
    }
    return nullptr;
  }
};

TEST(SubnetManager, BringsAFatTreeUpWithUniqueLidsAndWorkingRoutes) {
  Bringup b("fat-tree:2:8");
  b.run();
  ASSERT_TRUE(b.up) << b.sm.last_sweep().error;
  std::set<uint16_t> lids;
  for (uint32_t i = 0; i < b.fabric.node_count(); ++i) {
    fabric::Node& n = b.fabric.node(i);
    fabric::Port& p = n.is_switch() ? n.port(0) : n.port(1);
    EXPECT_NE(p.lid, 0) << n.name();
    EXPECT_TRUE(lids.insert(p.lid).second) << "duplicate LID " << p.lid;
    EXPECT_EQ(p.master_sm_lid, b.sm.own_lid()) << n.name();
    EXPECT_EQ(p.state(), fabric::PortState::Active) << n.name();
    for (uint8_t q = 1; q <= n.num_ports(); ++q)
      if (n.port(q).link()) EXPECT_EQ(n.port(q).state(), fabric::PortState::Active) << n.name() << "[" << int(q) << "]";
  }
  EXPECT_EQ(b.fabric.find_hca("H1")->port(1).lid, 1) << "the SM's port gets the first LID";
  // Every host reaches every other host by LID.
  for (int a = 1; a <= 32; a += 7)
    for (int z = 1; z <= 32; ++z) {
      const fabric::Hca& from = *b.fabric.find_hca("H" + std::to_string(a));
      const fabric::Hca& to = *b.fabric.find_hca("H" + std::to_string(z));
      if (a == z) continue;
      EXPECT_EQ(b.walk(from, to.port(1).lid), &to) << "H" << a << " -> H" << z;
    }
  EXPECT_EQ(b.report.nodes, 44u);
  EXPECT_EQ(b.report.end_ports, 44u);
  EXPECT_GT(b.report.smps_routing, 12u);
  EXPECT_EQ(b.report.smps, b.report.smps_discovery + b.report.smps_lids + b.report.smps_routing +
                               b.report.smps_activation);
}

TEST(SubnetManager, UpDownRoutingAlsoDelivers) {
  Bringup b("ring:5", "updn");
  b.run();
  ASSERT_TRUE(b.up) << b.sm.last_sweep().error;
  for (int a = 1; a <= 5; ++a)
    for (int z = 1; z <= 5; ++z)
      if (a != z) {
        const fabric::Hca& to = *b.fabric.find_hca("H" + std::to_string(z));
        EXPECT_EQ(b.walk(*b.fabric.find_hca("H" + std::to_string(a)), to.port(1).lid), &to);
      }
}

TEST(SubnetManager, LidsAreStableAcrossSweepsAndReregisterComesOnlyFirst) {
  Bringup b("fat-tree:2:4");
  struct Events : fabric::PortEventListener {
    int reregister = 0;
    void on_port_event(fabric::Hca&, uint8_t, fabric::PortEvent e) override {
      reregister += e == fabric::PortEvent::ClientReregister;
    }
  } ev;
  b.fabric.find_hca("H5")->add_listener(&ev);
  b.run();
  ASSERT_TRUE(b.up);
  const uint16_t lid5 = b.fabric.find_hca("H5")->port(1).lid;
  EXPECT_EQ(ev.reregister, 1);
  b.up = false;
  b.run();  // a second heavy sweep
  ASSERT_TRUE(b.up);
  EXPECT_EQ(b.fabric.find_hca("H5")->port(1).lid, lid5);
  EXPECT_EQ(ev.reregister, 1) << "ClientReregister only on the first master sweep";
  EXPECT_EQ(b.report.ports_activated, 0u) << "everything was Active already";
  b.fabric.find_hca("H5")->remove_listener(&ev);
}

TEST(SubnetManager, ARebootedSwitchIsBroughtBackByTheNextSweep) {
  Bringup b("fat-tree:2:4");
  b.run();
  ASSERT_TRUE(b.up);
  fabric::Switch& s1 = *b.fabric.find_switch("S1");
  const uint16_t lid = s1.port(0).lid;
  b.fabric.set_node_up(s1, false);
  b.fabric.set_node_up(s1, true);
  EXPECT_EQ(s1.port(0).lid, 0);
  b.up = false;
  b.run();
  ASSERT_TRUE(b.up);
  EXPECT_EQ(s1.port(0).lid, lid) << "same GUID, same LID";
  EXPECT_NE(s1.lft(b.fabric.find_hca("H8")->port(1).lid), fabric::Switch::kNoRoute);
}

TEST(SubnetManager, UnknownRoutingEngineIsRefused) {
  sim::Simulator sim;
  topo::Topology t = topo::load_topology("line:2");
  fabric::Fabric f(sim, t);
  SmOptions o;
  o.routing = "astrology";
  EXPECT_THROW(SubnetManager(*f.find_hca("H1"), 1, o), std::runtime_error);
}

}  // namespace
}  // namespace ibfab::sm
