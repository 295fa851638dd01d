// UC (no ACKs: a lost packet loses its message, and the receive it had
// taken serves the next) and shared receive queues (two QPs on one SRQ,
// the limit event).
#include <gtest/gtest.h>

#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

class UcTest : public RcFixture {
 public:
  QpOptions uc() {
    QpOptions o;
    o.transport = Transport::kUc;
    return o;
  }
};

TEST_F(UcTest, SendAndWriteAreDelivered) {
  connect(8, uc(), uc());
  fill(a, 0, 5000, 1);
  ASSERT_EQ(post_recv(b, 3, {sge(b, 0, 8192)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 5000)}), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kRdmaWrite, {sge(a, 0, 3000)}, send_flag::kSignaled, b.base() + 0x10000,
                      b.key),
            0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].status, wc_status::kSuccess);
  EXPECT_EQ(b.rec.recvs[0].byte_len, 5000u);
  EXPECT_EQ(b.read(0, 5000), a.read(0, 5000));
  EXPECT_EQ(b.read(0x10000, 3000), a.read(0, 3000));
  ASSERT_EQ(a.rec.sends.size(), 2u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[1].opcode, wc_opcode::kRdmaWrite);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kSuccess);
}

TEST_F(UcTest, ReadsAndAtomicsAreRefusedAtPost) {
  connect(2, uc(), uc());
  EXPECT_EQ(post_send(a, 1, wr_opcode::kRdmaRead, {sge(a, 0, 8)}, 0, b.base(), b.key), EINVAL);
  EXPECT_EQ(post_send(a, 2, wr_opcode::kAtomicFetchAndAdd, {sge(a, 0, 8)}, 0, b.base(), b.key), EINVAL);
  EXPECT_EQ(post_send(a, 3, wr_opcode::kSendWithInv, {sge(a, 0, 8)}), EINVAL);
}

TEST_F(UcTest, OneLostPacketLosesExactlyItsMessage) {
  connect(2, uc(), uc());
  for (uint32_t i = 0; i < 3; ++i) {
    fill(a, i * 4096, 3000, static_cast<uint8_t>(10 * i + 1));
    ASSERT_EQ(post_recv(b, i, {sge(b, i * 4096, 4096)}), 0);
  }
  Port& out = a.hca->port(1);
  ASSERT_EQ(post_send(a, 0, wr_opcode::kSend, {sge(a, 0, 3000)}), 0);
  sim.run();
  // The second message's middle packet is lost on H1's link: it goes out
  // when the first has left (busy_until), between the two loss changes.
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 4096, 3000)}), 0);
  Link& link = *out.link();
  const sim::Time second = out.busy_until;
  sim.schedule_at(second - sim::Time::ps(1), [&] { fabric.set_link_loss(link, 1.0); });
  sim.schedule_at(second + sim::Time::ps(1), [&] { fabric.set_link_loss(link, 0.0); });
  sim.run();
  EXPECT_EQ(fabric.stats().drops(DropReason::Loss), 1u);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 8192, 3000)}), 0);
  sim.run();
  // Messages 0 and 2 arrive; 2 in the receive message 1 had taken.
  ASSERT_EQ(b.rec.recvs.size(), 2u);
  EXPECT_EQ(b.rec.recvs[0].wr_id, 0u);
  EXPECT_EQ(b.rec.recvs[1].wr_id, 1u);
  EXPECT_EQ(b.rec.recvs[1].status, wc_status::kSuccess);
  EXPECT_EQ(b.rec.recvs[1].byte_len, 3000u);
  EXPECT_EQ(b.read(0, 3000), a.read(0, 3000));
  EXPECT_EQ(b.read(4096, 3000), a.read(8192, 3000));
  // UC completes each send when its last packet has left: all three.
  ASSERT_EQ(a.rec.sends.size(), 3u);
  for (const WorkCompletion& wc : a.rec.sends) EXPECT_EQ(wc.status, wc_status::kSuccess);
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kRts);
}

class SrqTest : public RcFixture {};

TEST_F(SrqTest, TwoQpsShareOneSrqAndTheLimitFiresOnce) {
  make_host(a, 1, 0x10000000);
  make_host(b, 2, 0x20000000);
  Host c, b2;
  make_host(c, 8, 0x30000000);
  b2.hca = b.hca;
  b2.pd = b.pd;
  b2.key = b.key;
  Recorder srq_events;
  const uint32_t srqn = b.hca->create_srq(b.pd, 16, 2, &srq_events);
  ASSERT_NE(srqn, 0u);
  QpOptions with_srq;
  with_srq.srqn = srqn;
  create_qp(a, {});
  create_qp(c, {});
  create_qp(b, with_srq);
  create_qp(b2, with_srq);
  bring_up(a, b, {});
  bring_up(b, a, with_srq);
  bring_up(c, b2, {});
  bring_up(b2, c, with_srq);
  for (uint32_t i = 0; i < 10; ++i) {
    std::vector<Sge> s{sge(b, i * 256, 128), sge(b, i * 256 + 128, 128)};
    RecvWr wr;
    wr.wr_id = 100 + i;
    wr.num_sge = 2;
    wr.sge = s.data();
    ASSERT_EQ(b.hca->post_srq_recv(srqn, wr), 0);
  }
  ASSERT_EQ(b.hca->arm_srq_limit(srqn, 5), 0);
  EXPECT_EQ(post_recv(b, 1, {sge(b, 0, 8)}), EINVAL) << "a QP on an SRQ has no receive queue of its own";
  for (uint32_t i = 0; i < 3; ++i) {
    fill(a, i * 256, 200, static_cast<uint8_t>(i));
    fill(c, i * 256, 200, static_cast<uint8_t>(100 + i));
    ASSERT_EQ(post_send(a, i, wr_opcode::kSend, {sge(a, i * 256, 200)}), 0);
    ASSERT_EQ(post_send(c, i, wr_opcode::kSend, {sge(c, i * 256, 200)}), 0);
  }
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 3u);
  ASSERT_EQ(b2.rec.recvs.size(), 3u);
  std::vector<uint64_t> ids;
  for (const Recorder* r : {&b.rec, &b2.rec})
    for (const WorkCompletion& wc : r->recvs) {
      EXPECT_EQ(wc.status, wc_status::kSuccess);
      EXPECT_EQ(wc.byte_len, 200u);
      EXPECT_EQ(wc.qp_num, r == &b.rec ? b.qpn : b2.qpn);
      ids.push_back(wc.wr_id);
    }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{100, 101, 102, 103, 104, 105}));
  // Each message landed whole in the WQE it took (two SGEs of 128).
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(b.read((b.rec.recvs[i].wr_id - 100) * 256, 200), a.read(i * 256, 200));
    EXPECT_EQ(b.read((b2.rec.recvs[i].wr_id - 100) * 256, 200), c.read(i * 256, 200));
  }
  // Six taken of ten: the count went below five once.
  EXPECT_EQ(std::count(srq_events.events.begin(), srq_events.events.end(), qp_event::kSrqLimitReached), 1);
  EXPECT_EQ(b.hca->destroy_srq(srqn), EBUSY);
  b.hca->destroy_qp(b.qpn);
  b.hca->destroy_qp(b2.qpn);
  EXPECT_EQ(b.hca->destroy_srq(srqn), 0);
}

}  // namespace
}  // namespace ibfab::fabric::testing
