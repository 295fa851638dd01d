// ibv_attach_mcast(3) and ibv_detach_mcast(3), sentence by sentence (the
// pages are in shared/seeds/), on an in-process fabric whose built-in SA
// programs the multicast trees. Every test names the sentence it checks.
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

ibv_gid mgid(uint8_t last) {
  ibv_gid g{};
  const uint8_t prefix[] = {0xff, 0x15, 0x12, 0x34};  // not an IPoIB signature: no broadcast group to agree with
  std::memcpy(g.raw, prefix, sizeof prefix);
  g.raw[15] = last;
  return g;
}

class VerbsMcast : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ASSERT_TRUE(sender_.ok());
    ASSERT_TRUE(r1_.ok());
    ASSERT_TRUE(r2_.ok());
    for (Host* h : {&sender_, &r1_, &r2_}) ASSERT_EQ(h->to_rts(), 0);
  }
  // Joins `h` (device ibfab<index>) to group `g` through the SA.
  uint16_t join(int index, const ibv_gid& g, const Host& h) {
    const std::string ca = "ibfab" + std::to_string(index);
    return sa_member(ca.c_str(), g, h.gid);
  }
  // Sends one message to the group from the sender; true if it left.
  bool send_to_group(const ibv_gid& g, uint16_t mlid, uint64_t id = 1) {
    ibv_ah* ah = sender_.ah_to(mlid, &g);
    if (!ah) return false;
    bool ok = sender_.send(ah, 0xFFFFFF, id, 0, 32) == 0;
    // The sender's CQ may also hold its own copy (loopback): counted aside.
    bool sent = false;
    for (int tries = 0; ok && !sent && tries < 2; ++tries)
      for (const ibv_wc& wc : poll_for(sender_.cq, 1)) {
        if (wc.opcode == IBV_WC_RECV) ++sender_copies_;
        else sent = wc.status == IBV_WC_SUCCESS;
      }
    ibv_destroy_ah(ah);
    return ok && sent;
  }
  // Receives on `h`, where `expected` messages should arrive: how many did
  // (poll_exactly).
  static std::size_t received(Host& h, std::size_t expected) { return poll_exactly(h.cq, expected).size(); }

  Host sender_{0};  // H3
  std::size_t sender_copies_ = 0;  // receives seen on the sender's CQ by send_to_group
  Host r1_{1};
  Host r2_{2};
};

// "ibv_attach_mcast() attaches the QP qp to the multicast group having MGID
// gid and MLID lid." -- and the fabric delivers once the SA has the ports.
TEST_F(VerbsMcast, AttachedQpsOnJoinedPortsReceive) {
  const ibv_gid g = mgid(1);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_GE(mlid, 0xC000);
  ASSERT_EQ(join(1, g, r1_), mlid);
  ASSERT_EQ(join(2, g, r2_), mlid);
  EXPECT_EQ(r1_.attach(g, mlid), 0);
  EXPECT_EQ(r2_.attach(g, mlid), 0);
  for (Host* h : {&r1_, &r2_}) ASSERT_EQ(h->post_recv(1, 0, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  for (Host* h : {&r1_, &r2_}) {
    const auto wc = poll_for(h->cq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
    EXPECT_TRUE(wc[0].wc_flags & IBV_WC_GRH);  // multicast always carries a GRH
    EXPECT_EQ(wc[0].src_qp, sender_.qp->qp_num);
    const auto* grh = reinterpret_cast<const ibv_grh*>(h->buf.data());
    EXPECT_EQ(std::memcmp(&grh->dgid, &g, 16), 0);
  }
}

// "In order to receive multicast messages, a join request for the multicast
// group must be sent to the subnet administrator (SA), so that the fabric's
// multicast routing is configured to deliver messages to the local port."
TEST_F(VerbsMcast, AttachWithoutJoinReceivesNothing) {
  const ibv_gid g = mgid(2);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_GE(mlid, 0xC000);
  ASSERT_EQ(r1_.attach(g, mlid), 0);  // attached, but r1's port never joined
  ASSERT_EQ(r1_.post_recv(1, 0, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  EXPECT_EQ(received(r1_, 0), 0u);
  ASSERT_EQ(join(1, g, r1_), mlid);  // now the SA adds r1's port to the tree
  ASSERT_TRUE(send_to_group(g, mlid, 2));
  EXPECT_EQ(received(r1_, 1), 1u);
}

// The HCA matches a multicast packet by its MGID, as mlx4 and mlx5 do
// (their attach ignores the LID): a QP attached with MLID 0 (before the
// join's answer gave the MLID) receives the group; attached again with the
// real MLID, it still gets one copy. uverbs keeps the two attachments
// apart, but the HCA has one: the first detach takes the QP off the MGID,
// and the second finds the HCA with nothing to detach (EINVAL, as mlx4's
// "QP not found in MGM").
TEST_F(VerbsMcast, TheMgidSelectsTheQpsNotTheMlid) {
  const ibv_gid g = mgid(13);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_EQ(join(1, g, r1_), mlid);
  ASSERT_EQ(r1_.attach(g, 0), 0);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(r1_.post_recv(static_cast<uint64_t>(i), 256u * i, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  EXPECT_EQ(received(r1_, 1), 1u);
  ASSERT_EQ(r1_.attach(g, mlid), 0);
  ASSERT_TRUE(send_to_group(g, mlid, 2));
  EXPECT_EQ(received(r1_, 1), 1u);
  EXPECT_EQ(r1_.detach(g, mlid), 0);
  ASSERT_TRUE(send_to_group(g, mlid, 3));
  EXPECT_EQ(received(r1_, 0), 0u);
  EXPECT_EQ(r1_.detach(g, 0), EINVAL);
}

// "If a QP is attached to the same multicast group multiple times, the QP
// will still receive a single copy of a multicast message."
TEST_F(VerbsMcast, AttachingTwiceStillGivesOneCopy) {
  const ibv_gid g = mgid(3);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_EQ(join(1, g, r1_), mlid);
  EXPECT_EQ(r1_.attach(g, mlid), 0);
  EXPECT_EQ(r1_.attach(g, mlid), 0);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(r1_.post_recv(static_cast<uint64_t>(i), 256u * i, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  EXPECT_EQ(received(r1_, 1), 1u);
  // FAQ: attached more than once, detached once.
  EXPECT_EQ(r1_.detach(g, mlid), 0);
  EXPECT_EQ(r1_.detach(g, mlid), EINVAL);
}

// "Only QPs of Transport Service Type IBV_QPT_UD may be attached to
// multicast groups." / EINVAL: "qp isn't an UD QP".
TEST_F(VerbsMcast, OnlyUdQpsAttach) {
  Host rc(1, IBV_QPT_RC);
  ASSERT_TRUE(rc.ok());
  const ibv_gid g = mgid(4);
  errno = 0;
  EXPECT_EQ(rc.attach(g, 0xC010), EINVAL);
  EXPECT_EQ(errno, EINVAL);  // "the value of errno on failure"
  EXPECT_EQ(rc.detach(g, 0xC010), EINVAL);
}

// EINVAL: "Invalid gid (not multicast GID)".
TEST_F(VerbsMcast, UnicastGidIsEinval) {
  EXPECT_EQ(r1_.attach(r1_.gid, 0xC010), EINVAL);
  EXPECT_EQ(r1_.detach(r1_.gid, 0xC010), EINVAL);
}

// "After the detachment completes, this QP won't get a copy of every
// multicast message addressed to the group ..." and "ibv_detach_mcast()
// only influence the local RDMA device": r2 is still attached and its port
// still in the tree, and r1's port stays in the tree too (no leave was sent).
TEST_F(VerbsMcast, DetachStopsThisQpOnly) {
  const ibv_gid g = mgid(5);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_EQ(join(1, g, r1_), mlid);
  ASSERT_EQ(join(2, g, r2_), mlid);
  ASSERT_EQ(r1_.attach(g, mlid), 0);
  ASSERT_EQ(r2_.attach(g, mlid), 0);
  Host r1b(1);  // a second QP on r1's port, attached too
  ASSERT_TRUE(r1b.ok());
  ASSERT_EQ(r1b.to_rts(), 0);
  ASSERT_EQ(r1b.attach(g, mlid), 0);
  for (Host* h : {&r1_, &r2_, &r1b}) ASSERT_EQ(h->post_recv(1, 0, 256), 0);
  ASSERT_EQ(r1_.detach(g, mlid), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  EXPECT_EQ(received(r1_, 0), 0u);
  EXPECT_EQ(received(r2_, 1), 1u);
  EXPECT_EQ(received(r1b, 1), 1u);  // the port still gets the group's traffic
}

// "ibv_detach_mcast() must be called with the same attributes that
// ibv_attach_mcast() was called with." / EINVAL: "QP wasn't attached using gid".
TEST_F(VerbsMcast, DetachNeedsTheSameAttributes) {
  const ibv_gid g = mgid(6);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_EQ(join(1, g, r1_), mlid);
  ASSERT_EQ(r1_.attach(g, mlid), 0);
  const ibv_gid other = mgid(66);
  EXPECT_EQ(r1_.detach(g, static_cast<uint16_t>(mlid + 1)), EINVAL);
  EXPECT_EQ(r1_.detach(other, mlid), EINVAL);
  ASSERT_EQ(r1_.post_recv(1, 0, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  EXPECT_EQ(received(r1_, 1), 1u);  // still attached
}

// "Detaching a QP from a specific multicast group won't affect receiving
// messages from other multicast groups that this QP may be attached to."
TEST_F(VerbsMcast, DetachingOneGroupLeavesTheOthers) {
  const ibv_gid g1 = mgid(7), g2 = mgid(8);
  const uint16_t m1 = join(0, g1, sender_), m2 = join(0, g2, sender_);
  ASSERT_NE(m1, m2);
  ASSERT_EQ(join(1, g1, r1_), m1);
  ASSERT_EQ(join(1, g2, r1_), m2);
  ASSERT_EQ(r1_.attach(g1, m1), 0);
  ASSERT_EQ(r1_.attach(g2, m2), 0);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(r1_.post_recv(static_cast<uint64_t>(i), 256u * i, 256), 0);
  ASSERT_EQ(r1_.detach(g1, m1), 0);
  ASSERT_TRUE(send_to_group(g1, m1));
  ASSERT_TRUE(send_to_group(g2, m2, 2));
  const auto wc = poll_exactly(r1_.cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(std::memcmp(&reinterpret_cast<const ibv_grh*>(r1_.buf.data())->dgid, &g2, 16), 0);
}

// "Detaching a QP from a multicast group can occur in any QP state."
TEST_F(VerbsMcast, DetachInAnyState) {
  const ibv_gid g = mgid(9);
  for (ibv_qp_state s : {IBV_QPS_RTS, IBV_QPS_ERR, IBV_QPS_RESET}) {
    ASSERT_EQ(r1_.attach(g, 0xC123), 0);
    ibv_qp_attr a{};
    a.qp_state = s;
    if (s != IBV_QPS_RTS) ASSERT_EQ(ibv_modify_qp(r1_.qp, &a, IBV_QP_STATE), 0);
    EXPECT_EQ(r1_.detach(g, 0xC123), 0) << "state " << s;
  }
}

// ENOMEM: "Not enough resources to complete this operation": past the
// device's max_mcast_grp groups on a port.
TEST_F(VerbsMcast, PastTheDeviceLimitIsEnomem) {
  ibv_device_attr d{};
  ASSERT_EQ(ibv_query_device(r1_.ctx, &d), 0);
  int last = 0;
  for (int i = 0; i <= d.max_mcast_grp && last == 0; ++i) {
    ibv_gid g = mgid(0);
    g.raw[13] = static_cast<uint8_t>(i >> 8);
    g.raw[14] = static_cast<uint8_t>(i);
    last = r1_.attach(g, static_cast<uint16_t>(0xC000 + i));
  }
  EXPECT_EQ(last, ENOMEM);
}

// Loopback: another QP of the sending port that is attached gets the
// message, and so does the sender's own QP unless it blocks self-loopback
// (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB).
TEST_F(VerbsMcast, LocalLoopbackUnlessBlocked) {
  const ibv_gid g = mgid(10);
  const uint16_t mlid = join(0, g, sender_);
  Host peer(0);  // a second QP on the sender's port
  Host quiet(0, IBV_QPT_UD, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
  for (Host* h : {&peer, &quiet}) {
    ASSERT_TRUE(h->ok());
    ASSERT_EQ(h->to_rts(), 0);
    ASSERT_EQ(h->attach(g, mlid), 0);
    ASSERT_EQ(h->post_recv(1, 0, 256), 0);
  }
  ASSERT_EQ(sender_.attach(g, mlid), 0);
  ASSERT_EQ(sender_.post_recv(1, 4096, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));  // consumes the sender's send completion
  EXPECT_EQ(received(peer, 1), 1u);
  EXPECT_EQ(sender_copies_ + received(sender_, sender_copies_ ? 0 : 1), 1u);  // its own copy
  EXPECT_EQ(received(quiet, 1), 1u);    // blocking concerns its own sends only
  // The blocking QP sends: it does not get its own message; peer does.
  ASSERT_EQ(quiet.post_recv(2, 0, 256), 0);
  ASSERT_EQ(peer.post_recv(2, 0, 256), 0);
  ibv_ah* ah = quiet.ah_to(mlid, &g);
  ASSERT_EQ(quiet.send(ah, 0xFFFFFF, 5, 0, 16), 0);
  const auto wc = poll_exactly(quiet.cq, 1);  // its send completion
  int recvs = 0;
  for (const ibv_wc& w : wc) recvs += w.opcode == IBV_WC_RECV;
  EXPECT_EQ(recvs, 0);
  EXPECT_EQ(received(peer, 1), 1u);
  ibv_destroy_ah(ah);
}

// As uverbs: a user's ibv_destroy_qp of a QP still attached is refused
// (EBUSY) and the QP keeps receiving; detached, it is destroyed.
// (librdmacm's rdma_destroy_qp ignores the refusal: the QP lives on.)
TEST_F(VerbsMcast, AnAttachedQpIsNotDestroyedUntilItDetaches) {
  const ibv_gid g = mgid(11);
  const uint16_t mlid = join(0, g, sender_);
  ASSERT_EQ(join(1, g, r1_), mlid);
  Host other(1);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other.to_rts(), 0);
  ASSERT_EQ(other.attach(g, mlid), 0);
  EXPECT_EQ(ibv_destroy_qp(other.qp), EBUSY);
  ASSERT_EQ(other.post_recv(1, 0, 256), 0);
  ASSERT_TRUE(send_to_group(g, mlid));
  EXPECT_EQ(received(other, 1), 1u);
  EXPECT_EQ(other.detach(g, mlid), 0);
  EXPECT_EQ(ibv_destroy_qp(other.qp), 0);
  other.qp = nullptr;
}

}  // namespace
}  // namespace ibfab::testing
