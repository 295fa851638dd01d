// Switch forwarding: LFT for unicast, MFT for multicast (never back out of
// the ingress port), output queues with serialisation delay.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/topology/topology_spec.h"
#include "fabric/wire/gid.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::fabric {
namespace {

struct Count : UdEndpoint {
  int n = 0;
  sim::Time last;
  sim::Simulator* sim = nullptr;
  bool on_receive(const UdMessage&) override {
    ++n;
    last = sim->now();
    return true;
  }
};

class ForwardingTest : public ::testing::Test {
 protected:
  ForwardingTest() : topo(topo::load_topology("line:3")), fabric(sim, topo) { testing::configure_by_hand(fabric); }
  Hca& h(int i) { return *fabric.find_hca("H" + std::to_string(i)); }
  Switch& s(int i) { return *fabric.find_switch("S" + std::to_string(i)); }
  uint8_t port_to(Node& from, const std::string& to) {
    for (uint8_t n = 1; n <= from.num_ports(); ++n)
      if (from.port(n).peer() && from.port(n).peer()->node().name() == to) return n;
    return 0;
  }
  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
};

TEST_F(ForwardingTest, UnicastFollowsTheLftAndTakesWireAndSwitchTime) {
  Count c;
  c.sim = &sim;
  Count unused;
  const uint32_t q1 = h(1).create_ud_qp(1, 1, 0, &unused);
  const uint32_t q3 = h(3).create_ud_qp(1, 1, 0, &c);
  const std::vector<uint8_t> payload(256, 0);
  UdSend send;
  send.dlid = h(3).port(1).lid;
  send.dest_qp = q3;
  send.qkey = 1;
  send.payload = payload;
  ASSERT_TRUE(h(1).send_ud(q1, send));
  sim.run();
  ASSERT_EQ(c.n, 1);
  // 4 links (H1-S1-S2-S3-H3), store and forward: 4 x (serialisation + 10 ns)
  // plus 3 switch latencies. Packet: LRH 8 + BTH 12 + DETH 8 + 256 + CRCs 6.
  const LinkRate rate = h(1).port(1).link()->rate();
  const sim::Time expect = (rate.serialisation(290) + sim::Time::ns(10)) * 4 +
                           fabric.options().switch_latency * 3;
  EXPECT_EQ(c.last, expect);
  EXPECT_EQ(s(2).port(port_to(s(2), "S3")).counters.xmit_pkts, 1u);
}

TEST_F(ForwardingTest, NoRouteIsARelayErrorOnTheIngressPort) {
  Count unused;
  const uint32_t q1 = h(1).create_ud_qp(1, 1, 0, &unused);
  s(1).set_lft(h(3).port(1).lid, Switch::kNoRoute);
  UdSend send;
  send.dlid = h(3).port(1).lid;
  send.dest_qp = 5;
  send.qkey = 1;
  h(1).send_ud(q1, send);
  sim.run();
  EXPECT_EQ(s(1).port(port_to(s(1), "H1")).counters.rcv_switch_relay_errors, 1u);
  EXPECT_EQ(fabric.stats().drops(DropReason::NoRoute), 1u);
}

TEST_F(ForwardingTest, BackToBackPacketsQueueBehindEachOther) {
  Count c;
  c.sim = &sim;
  Count unused;
  const uint32_t q1 = h(1).create_ud_qp(1, 1, 0, &unused);
  const uint32_t q2 = h(2).create_ud_qp(1, 1, 0, &c);
  const std::vector<uint8_t> payload(2048, 0);
  UdSend send;
  send.dlid = h(2).port(1).lid;
  send.dest_qp = q2;
  send.qkey = 1;
  send.payload = payload;
  h(1).send_ud(q1, send);
  h(1).send_ud(q1, send);
  sim.run();
  ASSERT_EQ(c.n, 2);
  const sim::Time one = h(1).port(1).link()->rate().serialisation(8 + 12 + 8 + 2048 + 6);
  // The second packet leaves H1 one serialisation later, and stays behind.
  EXPECT_GE(c.last, one * 3);
}

TEST_F(ForwardingTest, MulticastReplicatesAndNeverGoesBackOutTheIngressPort) {
  // Put the ingress port itself in the MFT entry: it must still not echo.
  const uint16_t mlid = 0xC010;
  Switch& s2 = s(2);
  const uint8_t to_s1 = port_to(s2, "S1"), to_s3 = port_to(s2, "S3"), to_h2 = port_to(s2, "H2");
  for (uint8_t p : {to_s1, to_s3, to_h2})
    s2.set_mft(mlid, p / 16, static_cast<uint16_t>(s2.mft(mlid, p / 16) | 1u << (p % 16)));
  const uint8_t s1_up = port_to(s(1), "S2"), s1_h1 = port_to(s(1), "H1");
  s(1).set_mft(mlid, 0, static_cast<uint16_t>(1u << s1_up | 1u << s1_h1));
  const uint64_t back_before = s2.port(to_s1).counters.xmit_pkts;
  Count unused;
  const uint32_t q1 = h(1).create_ud_qp(1, 1, 0, &unused);
  UdSend send;
  send.dlid = mlid;
  send.dest_qp = 0xFFFFFF;
  send.global = true;
  send.dgid = wire::Gid::parse("ff12::1").value().raw;
  h(1).send_ud(q1, send);
  sim.run();
  EXPECT_EQ(s2.port(to_s3).counters.xmit_pkts, 1u);
  EXPECT_EQ(s2.port(to_h2).counters.xmit_pkts, 1u);
  EXPECT_EQ(s2.port(to_s1).counters.xmit_pkts, back_before) << "never back out of the ingress port";
  EXPECT_EQ(s(1).port(s1_h1).counters.xmit_pkts, 0u) << "nor back to the sender";
  // S3 has no MFT entry for the MLID: a relay error there, not a crash.
  EXPECT_EQ(s(3).port(port_to(s(3), "S2")).counters.rcv_switch_relay_errors, 1u);
}

TEST_F(ForwardingTest, MftPositionsCoverPortsAbove15) {
  Switch& s1 = s(1);
  ASSERT_GE(s1.num_ports(), 32);
  EXPECT_EQ(s1.mft_positions(), s1.num_ports() / 16 + 1);
  s1.set_mft(0xC020, 2, 0x0001);  // port 32
  EXPECT_EQ(s1.mft(0xC020, 2), 0x0001);
  EXPECT_EQ(s1.mft(0xC020, 0), 0);
  s1.set_mft(0xC000 + fabric.options().multicast_fdb_cap, 0, 1);  // beyond the cap: ignored
  EXPECT_EQ(s1.mft(0xC000 + fabric.options().multicast_fdb_cap, 0), 0);
}

}  // namespace
}  // namespace ibfab::fabric
