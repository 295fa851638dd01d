#pragma once
// Test fixture: fat-tree:2:4 brought up by a SubnetManager on H1, and an SA
// requester on H2 (sa_table_client.h). Test code may read the fabric; the
// SM never does.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/model/switch_node.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"
#include "tests/sm/sa_table_client.h"

namespace ibfab::sm::testing {

struct SaOnFabric : ::testing::Test {
  sim::Simulator sim;
  topo::Topology topology{topo::load_topology("fat-tree:2:4")};
  fabric::Fabric fabric{sim, topology};
  SubnetManager sm{*fabric.find_hca("H1"), 1, {}};
  std::optional<SaClient> client;

  void SetUp() override {
    sm.sweep();
    sim.run();
    ASSERT_TRUE(sm.subnet_up()) << sm.last_sweep().error;
    client.emplace(fabric, h(2), sm.own_lid());
  }
  fabric::Hca& h(int i) const { return *fabric.find_hca("H" + std::to_string(i)); }
  // The LID OpenSM reports for a port: a switch port's is its port 0's.
  static uint16_t base_lid(const fabric::Port& p) {
    return p.node().is_switch() ? p.node().port(0).lid : p.lid;
  }
  const fabric::Port* port_by_lid(uint16_t lid) const {
    for (uint32_t i = 0; i < fabric.node_count(); ++i) {
      fabric::Node& n = fabric.node(i);
      for (uint8_t p = 0; p <= n.num_ports(); ++p) {
        if (p == 0 && !n.is_switch()) continue;
        if (n.port(p).lid == lid && (p == 0 || !n.is_switch())) return &n.port(p);
      }
    }
    return nullptr;
  }
  std::vector<const fabric::Switch*> switches() const {
    std::vector<const fabric::Switch*> v;
    for (uint32_t i = 0; i < fabric.node_count(); ++i)
      if (fabric.node(i).is_switch()) v.push_back(static_cast<const fabric::Switch*>(&fabric.node(i)));
    return v;
  }
  template <class R>
  std::optional<testing::SaAnswer> query(uint8_t m, uint64_t mask, const R& r, uint64_t sm_key = 0) {
    return testing::ask(*client, SaClient::make(m, mask, r, sm_key));
  }
};

}  // namespace ibfab::sm::testing
