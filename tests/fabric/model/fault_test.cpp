// Faults: links and nodes going down and up, loss, and what ports and
// counters show for them.
#include <gtest/gtest.h>

#include <string>

#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::fabric {
namespace {

struct Count : UdEndpoint {
  int n = 0;
  bool on_receive(const UdMessage&) override { return ++n, true; }
};

class FaultTest : public ::testing::Test {
 protected:
  FaultTest() : topo(topo::load_topology("line:2")), fabric(sim, topo) { testing::configure_by_hand(fabric); }
  Hca& h(int i) { return *fabric.find_hca("H" + std::to_string(i)); }
  Link& s1_s2() {
    Switch& s1 = *fabric.find_switch("S1");
    for (uint8_t n = 1; n <= s1.num_ports(); ++n)
      if (s1.port(n).peer() && s1.port(n).peer()->node().is_switch()) return *s1.port(n).link();
    throw std::logic_error("no inter-switch link");
  }
  int send_one(Count& rx) {
    Count tx;
    const uint32_t qa = h(1).create_ud_qp(1, 7, 0, &tx);
    const uint32_t qb = h(2).create_ud_qp(1, 7, 0, &rx);
    UdSend s;
    s.dlid = h(2).port(1).lid;
    s.dest_qp = qb;
    s.qkey = 7;
    const bool sent = h(1).send_ud(qa, s).has_value();
    sim.run();
    return sent ? rx.n : -1;
  }
  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
};

TEST(FabricLifetime, DestroyingAFabricWithPacketsInFlightIsSafe) {
  sim::Simulator sim;
  {
    topo::Topology t = topo::load_topology("line:2");
    Fabric f(sim, t);
    testing::configure_by_hand(f);
    Count tx, rx;
    Hca& a = *f.find_hca("H1");
    Hca& b = *f.find_hca("H2");
    const uint32_t qa = a.create_ud_qp(1, 7, 0, &tx);
    UdSend s;
    s.dlid = b.port(1).lid;
    s.dest_qp = b.create_ud_qp(1, 7, 0, &rx);
    s.qkey = 7;
    for (int i = 0; i < 10; ++i) a.send_ud(qa, s);
    sim.run_until(sim::Time::ns(50));  // packets are on the wire
    EXPECT_GT(sim.events_pending(), 0u);
  }
  EXPECT_EQ(sim.events_pending(), 0u);
}

TEST_F(FaultTest, ALinkDownDropsTrafficAndItsPortsComeBackInInit) {
  Link& l = s1_s2();
  fabric.set_link_up(l, false);
  EXPECT_EQ(l.end(0)->state(), PortState::Down);
  EXPECT_EQ(l.end(0)->phys_state(), PhysState::Polling);
  EXPECT_EQ(l.end(0)->counters.link_downed, 1u);
  Count rx;
  EXPECT_EQ(send_one(rx), 0);
  EXPECT_GE(fabric.stats().drops(DropReason::LinkDown), 1u);
  fabric.set_link_up(l, true);
  EXPECT_EQ(l.end(0)->state(), PortState::Init) << "the SM must activate it again";
  EXPECT_EQ(l.end(0)->phys_state(), PhysState::LinkUp);
  Count rx2;
  EXPECT_EQ(send_one(rx2), 0) << "data needs Active ports";
  EXPECT_GE(fabric.stats().drops(DropReason::NotActive), 1u);
}

TEST_F(FaultTest, PacketsInFlightWhenTheLinkFailsAreLost) {
  Count rx, tx;
  const uint32_t qa = h(1).create_ud_qp(1, 7, 0, &tx);
  const uint32_t qb = h(2).create_ud_qp(1, 7, 0, &rx);
  UdSend s;
  s.dlid = h(2).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 7;
  h(1).send_ud(qa, s);
  Link& l = s1_s2();
  sim.schedule(sim::Time::ns(5), [&] { fabric.set_link_up(l, false); });
  sim.run();
  EXPECT_EQ(rx.n, 0);
}

TEST_F(FaultTest, ANodeDownTakesItsLinksAndForgetsItsConfiguration) {
  struct Events : PortEventListener {
    int errors = 0;
    void on_port_event(Hca&, uint8_t, PortEvent e) override { errors += e == PortEvent::Error; }
  } events;
  h(1).add_listener(&events);
  Switch& s2 = *fabric.find_switch("S2");
  fabric.set_node_up(s2, false);
  EXPECT_EQ(h(2).port(1).phys_state(), PhysState::Polling) << "the cable to a dead switch is dark";
  EXPECT_EQ(h(2).port(1).state(), PortState::Down);
  Count rx;
  EXPECT_EQ(send_one(rx), 0) << "H1 may still send; the fabric drops it";
  fabric.set_node_up(s2, true);
  EXPECT_EQ(s2.port(0).lid, 0) << "a rebooted switch has forgotten its LID";
  EXPECT_EQ(s2.lft(h(2).port(1).lid), Switch::kNoRoute) << "and its routes";
  EXPECT_EQ(h(2).port(1).state(), PortState::Init);
  h(1).remove_listener(&events);
}

TEST_F(FaultTest, LossDropsAboutTheRequestedShareAndCountsReceiveErrors) {
  Link& l = s1_s2();
  fabric.set_link_loss(l, 0.5);
  Count rx, tx;
  const uint32_t qa = h(1).create_ud_qp(1, 7, 0, &tx);
  const uint32_t qb = h(2).create_ud_qp(1, 7, 0, &rx);
  UdSend s;
  s.dlid = h(2).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 7;
  for (int i = 0; i < 2000; ++i) h(1).send_ud(qa, s);
  sim.run();
  EXPECT_NEAR(rx.n, 1000, 120);
  EXPECT_EQ(fabric.stats().drops(DropReason::Loss), static_cast<uint64_t>(2000 - rx.n));
}

TEST_F(FaultTest, TheSameSeedLosesTheSamePackets) {
  auto run = [](uint64_t seed) {
    sim::Simulator sim;
    topo::Topology t = topo::load_topology("line:2");
    FabricOptions o;
    o.seed = seed;
    Fabric f(sim, t, o);
    testing::configure_by_hand(f);
    for (uint32_t i = 0; i < f.link_count(); ++i) f.set_link_loss(f.link(i), 0.3);
    Count rx, tx;
    Hca& a = *f.find_hca("H1");
    Hca& b = *f.find_hca("H2");
    const uint32_t qa = a.create_ud_qp(1, 7, 0, &tx);
    const uint32_t qb = b.create_ud_qp(1, 7, 0, &rx);
    std::string got;
    struct Rec : UdEndpoint {
      std::string* out;
      bool on_receive(const UdMessage& m) override { return out->push_back(char('a' + m.payload[0] % 26)), true; }
    } rec;
    rec.out = &got;
    const uint32_t qr = b.create_ud_qp(1, 7, 0, &rec);
    (void)qb;
    for (uint8_t i = 0; i < 200; ++i) {
      UdSend s;
      s.dlid = b.port(1).lid;
      s.dest_qp = qr;
      s.qkey = 7;
      const uint8_t byte = i;
      s.payload = std::span<const uint8_t>(&byte, 1);
      a.send_ud(qa, s);
    }
    sim.run();
    return got;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST_F(FaultTest, PacketsWaitingLongerThanTheHoqLifetimeAreDiscardedAndCounted) {
  EXPECT_EQ(h(1).port(1).hoq_lifetime(), sim::Time::ns(2'147'483'648)) << "default 19: 4.096 us x 2^19";
  h(1).port(1).hoq_life = 20;
  EXPECT_EQ(h(1).port(1).hoq_lifetime(), sim::Time::max()) << "20 and above: no limit";
  h(1).port(1).hoq_life = 2;  // 16.384 us: about 49 packets of 4 KB at 100 Gb/s
  Count rx, tx;
  const uint32_t qa = h(1).create_ud_qp(1, 7, 0, &tx);
  const uint32_t qb = h(2).create_ud_qp(1, 7, 0, &rx);
  const std::vector<uint8_t> big(4096, 1);
  UdSend s;
  s.dlid = h(2).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 7;
  s.payload = big;
  const int burst = 200;  // ~820 KB at once: 66 us of wire time
  for (int i = 0; i < burst; ++i) h(1).send_ud(qa, s);
  sim.run();
  EXPECT_GT(h(1).port(1).counters.xmit_discards, 0u);
  EXPECT_EQ(rx.n + static_cast<int>(h(1).port(1).counters.xmit_discards), burst);
}

}  // namespace
}  // namespace ibfab::fabric
