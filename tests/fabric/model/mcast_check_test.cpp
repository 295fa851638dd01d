// check_multicast on hand-programmed MFTs: a good tree passes; a loop, a
// leak to a non-member and a missing member are each reported by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/model/mcast_check.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::fabric {
namespace {

constexpr uint16_t kMlid = 0xC007;

// ring:3:2: S1 hosts H1 H2, S2 hosts H3 H4, S3 hosts H5 H6 (ports 1, 2);
// Si port 3 -> S(i+1) port 4, around the ring.
class McastCheckTest : public ::testing::Test {
 protected:
  McastCheckTest() : topo(topo::load_topology("ring:3:2")), fabric(sim, topo) { testing::configure_by_hand(fabric); }
  Switch& s(int i) { return *fabric.find_switch("S" + std::to_string(i)); }
  const Port* h(int i) { return &fabric.find_hca("H" + std::to_string(i))->port(1); }
  static uint16_t bits(std::initializer_list<int> ports) {
    uint16_t m = 0;
    for (int p : ports) m = static_cast<uint16_t>(m | 1u << p);
    return m;
  }
  // H1, H3, H5 on the chain S1 - S2 - S3 (the S3 - S1 cable unused).
  void program_tree() {
    s(1).set_mft(kMlid, 0, bits({1, 3}));
    s(2).set_mft(kMlid, 0, bits({1, 3, 4}));
    s(3).set_mft(kMlid, 0, bits({1, 4}));
  }
  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
};

TEST_F(McastCheckTest, AGoodTreeReachesEveryOtherMemberOnce) {
  program_tree();
  const McastCheck c = check_multicast(fabric, kMlid, {h(1), h(3), h(5)});
  EXPECT_TRUE(c.ok) << c.problem;
  EXPECT_EQ(c.ports_reached, 6u);  // 3 floods x 2 others
  EXPECT_TRUE(c.problem.empty());
}

TEST_F(McastCheckTest, ALoopIsReported) {
  program_tree();
  s(1).set_mft(kMlid, 0, bits({1, 3, 4}));
  s(3).set_mft(kMlid, 0, bits({1, 3, 4}));
  const McastCheck c = check_multicast(fabric, kMlid, {h(1), h(3), h(5)});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.problem.find("entered twice"), std::string::npos) << c.problem;
}

TEST_F(McastCheckTest, ALeakToANonMemberIsNamed) {
  program_tree();
  s(2).set_mft(kMlid, 0, bits({1, 2, 3, 4}));
  const McastCheck c = check_multicast(fabric, kMlid, {h(1), h(3), h(5)});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.problem.find("H4[1] (not a member) reached"), std::string::npos) << c.problem;
}

TEST_F(McastCheckTest, AMissingMemberIsNamed) {
  program_tree();
  s(3).set_mft(kMlid, 0, bits({4}));
  const McastCheck c = check_multicast(fabric, kMlid, {h(1), h(3), h(5)});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.problem.find("H5[1] not reached"), std::string::npos) << c.problem;
}

TEST_F(McastCheckTest, OtherMlidsAndEmptyTablesReachNothing) {
  program_tree();
  EXPECT_FALSE(check_multicast(fabric, kMlid + 1, {h(1), h(3)}).ok);
  const McastCheck single = check_multicast(fabric, kMlid + 1, {h(1)});
  EXPECT_TRUE(single.ok) << single.problem;
  EXPECT_EQ(single.ports_reached, 0u);
}

TEST_F(McastCheckTest, ASwitchPortZeroMemberIsReachedByBitZero) {
  s(1).set_mft(kMlid, 0, bits({1, 3}));
  s(2).set_mft(kMlid, 0, bits({0, 4}));
  const McastCheck c = check_multicast(fabric, kMlid, {h(1), &s(2).port(0)});
  EXPECT_TRUE(c.ok) << c.problem;
  EXPECT_EQ(c.ports_reached, 2u);
}

TEST(McastCheck, PortsAboveFifteenLiveAtTheirPosition) {
  // ring:3:20: hosts on ports 1..20; S1 port 21 <-> S2 port 22 (position 1,
  // bits 5 and 6).
  sim::Simulator sim;
  const topo::Topology topo = topo::load_topology("ring:3:20");
  Fabric fabric(sim, topo);
  testing::configure_by_hand(fabric);
  Switch& s1 = *fabric.find_switch("S1");
  Switch& s2 = *fabric.find_switch("S2");
  const std::vector<const Port*> members = {&fabric.find_hca("H1")->port(1), &fabric.find_hca("H21")->port(1)};
  s1.set_mft(kMlid, 0, 1u << 1);
  s2.set_mft(kMlid, 0, 1u << 1);
  EXPECT_FALSE(check_multicast(fabric, kMlid, members).ok);
  s1.set_mft(kMlid, 1, 1u << 5);
  s2.set_mft(kMlid, 1, 1u << 6);
  const McastCheck c = check_multicast(fabric, kMlid, members);
  EXPECT_TRUE(c.ok) << c.problem;
  EXPECT_EQ(c.ports_reached, 2u);
}

TEST_F(McastCheckTest, ADownLinkCarriesNothing) {
  program_tree();
  fabric.set_link_up(*s(2).port(3).link(), false);
  const McastCheck c = check_multicast(fabric, kMlid, {h(1), h(3), h(5)});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.problem.find("H5[1] not reached"), std::string::npos) << c.problem;
}

}  // namespace
}  // namespace ibfab::fabric
