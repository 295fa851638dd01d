// The HCA data path: UD unicast and multicast through switches, Q_Key and
// P_Key checks, the multicast attach table, loopback.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "fabric/topology/topology_spec.h"
#include "fabric/wire/gid.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::fabric {
namespace {

struct Inbox : UdEndpoint {
  std::vector<std::string> payloads;
  std::vector<UdMessage> meta;
  bool accept = true;
  bool on_receive(const UdMessage& m) override {
    if (!accept) return false;
    payloads.emplace_back(m.payload.begin(), m.payload.end());
    meta.push_back(m);
    meta.back().payload = {};
    meta.back().grh.reset();
    return true;
  }
};

std::array<uint8_t, 16> mgid(uint8_t last) {
  auto g = wire::Gid::parse("ff12:601b:ffff::1").value().raw;
  g[15] = last;
  return g;
}

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// fat-tree:2:4: 4 leaves (2 hosts each), 2 spines, H1..H8.
class UdTest : public ::testing::Test {
 protected:
  UdTest() : topo(topo::load_topology("fat-tree:2:4")), fabric(sim, topo) { testing::configure_by_hand(fabric); }

  Hca& h(int i) { return *fabric.find_hca("H" + std::to_string(i)); }

  // Programs `mlid` into every switch's MFT so that it reaches `members`:
  // the ports towards each member along the unicast routes from every other
  // member (a simple union of paths: what a tree builder would produce here).
  void program_group(uint16_t mlid, const std::vector<int>& members) {
    for (int src : members)
      for (int dst : members) {
        if (src == dst) continue;
        Port* at = h(src).port(1).peer();
        const uint16_t dlid = h(dst).port(1).lid;
        while (at) {
          auto& sw = static_cast<Switch&>(at->node());
          const uint8_t out = sw.lft(dlid);
          sw.set_mft(mlid, out / 16, static_cast<uint16_t>(sw.mft(mlid, out / 16) | 1u << (out % 16)));
          sw.set_mft(mlid, at->number() / 16,
                     static_cast<uint16_t>(sw.mft(mlid, at->number() / 16) | 1u << (at->number() % 16)));
          Port* next = sw.port(out).peer();
          at = next && next->node().is_switch() ? next : nullptr;
        }
      }
  }

  UdSend to_group(uint16_t mlid, uint8_t last, const std::string& text, uint32_t qkey = 0x1111) {
    UdSend s;
    s.dlid = mlid;
    s.dest_qp = 0xFFFFFF;
    s.qkey = qkey;
    s.global = true;
    s.dgid = mgid(last);
    s.payload = bytes(text);
    return s;
  }

  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
};

TEST_F(UdTest, UnicastCrossesTheFabricWithItsAddressing) {
  Inbox a, b;
  const uint32_t qa = h(1).create_ud_qp(1, 0x1111, 0, &a);
  const uint32_t qb = h(8).create_ud_qp(1, 0x1111, 0, &b);
  UdSend s;
  s.dlid = h(8).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 0x1111;
  s.sl = 3;
  s.immediate = 0xABCD;
  const std::string text = "hello across the spine";
  s.payload = bytes(text);
  ASSERT_TRUE(h(1).send_ud(qa, s));
  sim.run();
  ASSERT_EQ(b.payloads.size(), 1u);
  EXPECT_EQ(b.payloads[0], text);
  EXPECT_EQ(b.meta[0].src_qp, qa);
  EXPECT_EQ(b.meta[0].slid, h(1).port(1).lid);
  EXPECT_EQ(b.meta[0].sl, 3);
  EXPECT_EQ(b.meta[0].immediate, 0xABCDu);
  EXPECT_GT(sim.now(), sim::Time::ns(300)) << "four hops of wire and switch time";
}

TEST_F(UdTest, WrongQKeyIsDroppedAndCounted) {
  Inbox a, b;
  const uint32_t qa = h(1).create_ud_qp(1, 0x1111, 0, &a);
  const uint32_t qb = h(2).create_ud_qp(1, 0x2222, 0, &b);
  UdSend s;
  s.dlid = h(2).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 0x1111;
  const std::string text = "x";
  s.payload = bytes(text);
  h(1).send_ud(qa, s);
  sim.run();
  EXPECT_TRUE(b.payloads.empty());
  EXPECT_EQ(h(2).port(1).q_key_violations, 1);
}

TEST_F(UdTest, PKeyMismatchIsDroppedAndCounted) {
  Inbox a, b;
  h(1).port(1).pkeys[1] = 0x8123;  // a partition H2 is not in
  const uint32_t qa = h(1).create_ud_qp(1, 0x1111, 1, &a);
  const uint32_t qb = h(2).create_ud_qp(1, 0x1111, 0, &b);
  UdSend s;
  s.dlid = h(2).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 0x1111;
  const std::string text = "x";
  s.payload = bytes(text);
  h(1).send_ud(qa, s);
  sim.run();
  EXPECT_TRUE(b.payloads.empty());
  EXPECT_EQ(h(2).port(1).p_key_violations, 1);
  EXPECT_EQ(h(2).port(1).counters.rcv_constraint_errors, 1u);
}

TEST_F(UdTest, NoReceivePostedAndUnknownQpAreCounted) {
  Inbox a, b;
  b.accept = false;
  const uint32_t qa = h(1).create_ud_qp(1, 0x1111, 0, &a);
  const uint32_t qb = h(2).create_ud_qp(1, 0x1111, 0, &b);
  UdSend s;
  s.dlid = h(2).port(1).lid;
  s.dest_qp = qb;
  s.qkey = 0x1111;
  const std::string text = "x";
  s.payload = bytes(text);
  h(1).send_ud(qa, s);
  s.dest_qp = 0x777;
  h(1).send_ud(qa, s);
  sim.run();
  EXPECT_EQ(h(2).ud_stats().no_receive, 1u);
  EXPECT_EQ(h(2).ud_stats().no_qp, 1u);
}

TEST_F(UdTest, MulticastReachesEveryAttachedMemberOnceAndNeverTheSenderPort) {
  Inbox in[9];
  uint32_t qp[9];
  for (int i = 1; i <= 8; ++i) qp[i] = h(i).create_ud_qp(1, 0x1111, 0, &in[i]);
  const uint16_t mlid = 0xC001;
  program_group(mlid, {1, 3, 5, 8});
  for (int i : {3, 5, 8}) ASSERT_EQ(h(i).attach_mcast(qp[i], mgid(1), mlid), 0);
  ASSERT_EQ(h(5).attach_mcast(qp[5], mgid(1), mlid), 0) << "a second attach is not an error";
  ASSERT_TRUE(h(1).send_ud(qp[1], to_group(mlid, 1, "to the group")));
  sim.run();
  for (int i : {3, 5, 8}) {
    ASSERT_EQ(in[i].payloads.size(), 1u) << "H" << i << " gets exactly one copy";
    EXPECT_TRUE(in[i].meta[0].multicast);
  }
  for (int i : {1, 2, 4, 6, 7}) EXPECT_TRUE(in[i].payloads.empty()) << "H" << i;
  // Replication shared one payload: every buffer is back in the pool.
  EXPECT_EQ(fabric.packets().buffers_in_use(), 0u);
}

// The attach table is keyed by MGID, as mlx4's and mlx5's are: a detach
// needs the same MGID, and the MLID it names is not matched.
TEST_F(UdTest, DetachStopsDeliveryAndNeedsTheSameMgid) {
  Inbox in1, in2;
  const uint32_t q1 = h(1).create_ud_qp(1, 0x1111, 0, &in1);
  const uint32_t q2 = h(2).create_ud_qp(1, 0x1111, 0, &in2);
  const uint16_t mlid = 0xC002;
  program_group(mlid, {1, 2});
  ASSERT_EQ(h(2).attach_mcast(q2, mgid(2), 0), 0) << "attached with MLID 0, before the join's answer";
  EXPECT_EQ(h(2).detach_mcast(q2, mgid(3), mlid), EINVAL) << "a different MGID";
  EXPECT_EQ(h(2).attach_mcast(q2, wire::Gid::parse("fe80::1").value().raw, mlid), EINVAL)
      << "not a multicast GID";
  h(1).send_ud(q1, to_group(mlid, 2, "one"));
  sim.run();
  ASSERT_EQ(h(2).detach_mcast(q2, mgid(2), mlid), 0) << "another MLID, the same MGID";
  h(1).send_ud(q1, to_group(mlid, 2, "two"));
  sim.run();
  EXPECT_EQ(in2.payloads, (std::vector<std::string>{"one"}));
  EXPECT_EQ(h(2).ud_stats().not_attached, 1u);
  EXPECT_EQ(h(2).detach_mcast(q2, mgid(2), 0), EINVAL) << "detached already";
}

TEST_F(UdTest, LoopbackReachesOtherQpsOnThePortUnlessBlocked) {
  Inbox self, other, blocked_in;
  const uint32_t qs = h(1).create_ud_qp(1, 0x1111, 0, &self);
  const uint32_t qo = h(1).create_ud_qp(1, 0x1111, 0, &other);
  const uint32_t qb = h(1).create_ud_qp(1, 0x1111, 0, &blocked_in, /*block_self_loopback=*/true);
  const uint16_t mlid = 0xC004;
  for (uint32_t q : {qs, qo, qb}) ASSERT_EQ(h(1).attach_mcast(q, mgid(4), mlid), 0);
  h(1).send_ud(qs, to_group(mlid, 4, "from qs"));
  h(1).send_ud(qb, to_group(mlid, 4, "from qb"));
  sim.run();
  EXPECT_EQ(other.payloads, (std::vector<std::string>{"from qs", "from qb"}));
  EXPECT_EQ(self.payloads, (std::vector<std::string>{"from qs", "from qb"}));
  EXPECT_EQ(blocked_in.payloads, (std::vector<std::string>{"from qs"})) << "blocked from its own sends";
}

TEST_F(UdTest, DestroyedQpLeavesItsGroups) {
  Inbox in1, in2;
  const uint32_t q1 = h(1).create_ud_qp(1, 0x1111, 0, &in1);
  const uint32_t q2 = h(2).create_ud_qp(1, 0x1111, 0, &in2);
  program_group(0xC005, {1, 2});
  ASSERT_EQ(h(2).attach_mcast(q2, mgid(5), 0xC005), 0);
  h(2).destroy_qp(q2);
  h(1).send_ud(q1, to_group(0xC005, 5, "gone"));
  sim.run();
  EXPECT_TRUE(in2.payloads.empty());
  EXPECT_FALSE(h(2).send_ud(q2, to_group(0xC005, 5, "x")));
}

TEST_F(UdTest, ASendOnAPortThatIsNotActiveFails) {
  Inbox a;
  const uint32_t qa = h(1).create_ud_qp(1, 0x1111, 0, &a);
  h(1).port(1).set_state(PortState::Armed);
  EXPECT_FALSE(h(1).send_ud(qa, to_group(0xC001, 1, "x")));
}

}  // namespace
}  // namespace ibfab::fabric
