// ipoib's broadcast group (api/server/kernel/ipoib.h): every Active port
// joins it at bring-up, by the MGID the SM creates for the partition.
#include <gtest/gtest.h>

#include "api/server/kernel/ipoib.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "sim/simulator.h"
#include "sm/sa/mcast_groups.h"
#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

TEST_F(CmService, EveryActivePortJoinsItsIpoibBroadcastGroupAtBringUp) {
  EXPECT_EQ(sa_members(kBroadcast), 8u);  // fat-tree:2:4 has 8 hosts
  EXPECT_EQ(sa_member(kBroadcast, "H5"), 0x1);
}

// The host computes the MGID itself (ipoib does, from the port's P_Key);
// it must be the one the SM made the partition's group with.
TEST(Ipoib, BroadcastMgidIsTheSmsGroupOfThePortsPartition) {
  sim::Simulator sim;
  const topo::Topology t = topo::load_topology("line:2");
  fabric::Fabric fabric(sim, t);
  fabric::Hca* h = nullptr;
  for (uint32_t i = 0; i < fabric.node_count() && !h; ++i)
    if (!fabric.node(i).is_switch()) h = static_cast<fabric::Hca*>(&fabric.node(i));
  ASSERT_NE(h, nullptr);
  fabric::Port& p = h->port(1);
  p.pkeys.clear();  // no P_Key table yet: the default partition
  EXPECT_EQ(Ipoib::broadcast_mgid(p), sm::McastGroups::ipoib_broadcast_mgid(2, 0xFFFF));
  p.pkeys = {0x0001};  // a limited member of partition 1: the group is the full member's
  EXPECT_EQ(Ipoib::broadcast_mgid(p), sm::McastGroups::ipoib_broadcast_mgid(2, 0x8001));
  p.pkeys = {0xFFFF, 0x8002};  // the first entry names it
  EXPECT_EQ(Ipoib::broadcast_mgid(p), sm::McastGroups::ipoib_broadcast_mgid(2, 0xFFFF));
}

}  // namespace
}  // namespace ibfab::api::cm_test
