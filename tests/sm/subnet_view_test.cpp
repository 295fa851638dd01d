// The SM's view of the subnet (sm/subnet.h) after a sweep holds what its
// SMPs read and wrote: every node's NodeInfo and NodeDescription, every
// port's PortInfo as last answered, the links, SwitchInfo as programmed and
// the SMs known. The tests compare it with the fabric itself, which test
// code may read (the SM never does).
#include <gtest/gtest.h>

#include <string>

#include "fabric/model/fabric.h"
#include "fabric/model/switch_node.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"

namespace ibfab::sm {
namespace {

struct Up {
  sim::Simulator sim;
  topo::Topology topology;
  fabric::Fabric fabric;
  SubnetManager sm;
  explicit Up(const std::string& spec)
      : topology(topo::load_topology(spec)), fabric(sim, topology), sm(*fabric.find_hca("H1"), 1, {}) {
    sm.sweep();
    sim.run();
  }
};

TEST(SubnetView, EveryNodeAndPortAsTheFabricHasThem) {
  Up u("fat-tree:2:4");
  ASSERT_TRUE(u.sm.subnet_up()) << u.sm.last_sweep().error;
  const Subnet& s = u.sm.subnet();
  ASSERT_EQ(s.nodes.size(), u.fabric.node_count());
  for (uint32_t i = 0; i < u.fabric.node_count(); ++i) {
    const fabric::Node& fn = u.fabric.node(i);
    const SubnetNode* n = s.node(fn.guid());
    ASSERT_NE(n, nullptr) << fn.name();
    EXPECT_EQ(n->is_switch(), fn.is_switch()) << fn.name();
    EXPECT_EQ(n->info.num_ports, fn.num_ports()) << fn.name();
    EXPECT_EQ(n->description, fn.description()) << fn.name();
    ASSERT_EQ(n->ports.size(), fn.num_ports() + 1u) << fn.name();
    for (uint8_t p = fn.is_switch() ? 0 : 1; p <= fn.num_ports(); ++p) {
      const fabric::Port& fp = fn.port(p);
      const SubnetNodePort& sp = n->ports[p];
      ASSERT_TRUE(sp.known) << fn.name() << "[" << int(p) << "]";
      EXPECT_EQ(sp.info.port_state, static_cast<uint8_t>(fp.state())) << fn.name() << "[" << int(p) << "]";
      if (p == 0 || !fn.is_switch()) {
        EXPECT_EQ(sp.info.lid, fp.lid) << fn.name() << "[" << int(p) << "]";
        EXPECT_EQ(sp.info.master_sm_lid, fp.master_sm_lid) << fn.name();
      }
      const fabric::Port* peer = p == 0 ? nullptr : fp.peer();
      if (!peer) {
        EXPECT_EQ(sp.peer_node, -1) << fn.name() << "[" << int(p) << "]";
        continue;
      }
      ASSERT_GE(sp.peer_node, 0) << fn.name() << "[" << int(p) << "]";
      EXPECT_EQ(s.nodes[static_cast<uint32_t>(sp.peer_node)].info.node_guid, peer->node().guid());
      EXPECT_EQ(sp.peer_port, peer->number());
    }
    if (fn.is_switch()) {
      const auto& sw = static_cast<const fabric::Switch&>(fn);
      ASSERT_TRUE(n->has_switch_info) << fn.name();
      EXPECT_EQ(n->switch_info.linear_fdb_top, sw.lft_top) << fn.name();
      EXPECT_EQ(n->switch_info.multicast_fdb_cap, sw.multicast_fdb_cap()) << fn.name();
      ASSERT_GE(n->routing_index, 0);
      const auto& lft = s.routes.lft[static_cast<uint32_t>(n->routing_index)];
      for (uint16_t lid = 1; lid <= sw.lft_top; ++lid)
        EXPECT_EQ(lid < lft.size() ? lft[lid] : 0xFF, sw.lft(lid)) << fn.name() << " LID " << lid;
    }
  }
}

TEST(SubnetView, TheMasterKnowsItself) {
  Up u("fat-tree:2:4");
  ASSERT_TRUE(u.sm.subnet_up());
  const Subnet& s = u.sm.subnet();
  ASSERT_EQ(s.sms.size(), 1u);
  EXPECT_EQ(s.sms[0].port_guid, u.fabric.find_hca("H1")->port(1).guid());
  EXPECT_EQ(s.sms[0].lid, u.fabric.find_hca("H1")->port(1).lid);
  EXPECT_EQ(s.sms[0].info.sm_state, mad::sm_state::kMaster);
}

}  // namespace
}  // namespace ibfab::sm
