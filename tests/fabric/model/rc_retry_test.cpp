// RC retransmission: RNR NAKs and their retry count, random loss on a link
// (go-back-N on the local ACK timeout and on PSN sequence error NAKs), and
// a link that stays down (RETRY_EXC_ERR after retry_cnt + 1 timeouts).
#include <gtest/gtest.h>

#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

class RcRetryTest : public RcFixture {
 public:
  // A's one WQE, waiting for B's receive posted (`sges`) 1 ms in: both
  // complete successfully after it, B's as `opcode` with `n` bytes.
  void expect_wait_for_late_receive(std::vector<Sge> sges, uint8_t opcode, uint32_t n) {
    sim.schedule(sim::Time::ms(1), [this, sges] { ASSERT_EQ(post_recv(b, 2, sges), 0); });
    sim.run();
    ASSERT_EQ(b.rec.recvs.size(), 1u);
    EXPECT_EQ(b.rec.recvs[0].status, wc_status::kSuccess);
    EXPECT_EQ(b.rec.recvs[0].opcode, opcode);
    EXPECT_EQ(b.rec.recvs[0].byte_len, n);
    EXPECT_GT(b.rec.recv_times[0], sim::Time::ms(1));
    ASSERT_EQ(a.rec.sends.size(), 1u);
    EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  }
};

TEST_F(RcRetryTest, SendWaitsForAReceivePostedLater) {
  connect();
  fill(a, 0, 3000, 4);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 3000)}), 0);
  // The receive comes 1 ms later: until then every try gets an RNR NAK.
  expect_wait_for_late_receive({sge(b, 0, 4096)}, wc_opcode::kRecv, 3000);
  EXPECT_EQ(b.read(0, 3000), a.read(0, 3000));
}

TEST_F(RcRetryTest, WriteWithImmediateWaitsForAReceiveAtItsLastPacket) {
  connect();
  fill(a, 0, 3000, 6);
  SendWr wr;
  wr.wr_id = 1;
  wr.opcode = wr_opcode::kRdmaWriteWithImm;
  wr.flags = send_flag::kSignaled;
  wr.imm_data = 0x0A0B0C0D;
  wr.remote_addr = b.base() + 0x100;
  wr.rkey = b.key;
  ASSERT_EQ(post(a, wr, {sge(a, 0, 3000)}), 0);
  expect_wait_for_late_receive({}, wc_opcode::kRecvRdmaWithImm, 3000);
  EXPECT_EQ(b.read(0x100, 3000), a.read(0, 3000));
}

TEST_F(RcRetryTest, FenceWaitsForTheReadBefore) {
  connect();
  fill(b, 0, 65536, 2);
  ASSERT_EQ(post_recv(b, 1, {sge(b, 0x100000, 64)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaRead, {sge(a, 0, 65536)}, send_flag::kSignaled, b.base(), b.key), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 64)}, send_flag::kSignaled | send_flag::kFence), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 2u);
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  // The SEND left only once the READ had completed, so it carries what the
  // READ brought.
  EXPECT_GT(b.rec.recv_times[0], a.rec.send_times[0]);
  EXPECT_EQ(b.read(0x100000, 64), b.read(0, 64));
}

TEST_F(RcRetryTest, RnrRetryZeroFailsAtOnce) {
  QpOptions o;
  o.rnr_retry = 0;
  connect(2, o, {});
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 10)}), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 10)}, 0), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 2u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRnrRetryExcErr);
  EXPECT_EQ(a.rec.sends[0].wr_id, 1u);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kWrFlushErr) << "unsignalled, but flushed";
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kError);
  // The responder did nothing wrong: it stays in RTS, as a ConnectX's does.
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kRts);
  EXPECT_TRUE(b.rec.events.empty());
}

TEST_F(RcRetryTest, RnrRetryCountIsHonoured) {
  QpOptions o;
  o.rnr_retry = 3;
  QpOptions ob;
  ob.min_rnr_timer = 14;  // 1.28 ms
  connect(2, o, ob);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 10)}), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRnrRetryExcErr);
  // Three waits of the NAK's timer, then the fourth NAK fails it.
  EXPECT_GT(a.rec.send_times[0], sim::Time::us(3 * 1280));
  EXPECT_LT(a.rec.send_times[0], sim::Time::us(4 * 1280));
}

TEST_F(RcRetryTest, LossyLinkDeliversEveryMessageOnceInOrder) {
  QpOptions o;
  o.caps = QpCaps{512, 512, 1, 1, 0};
  o.max_rd_atomic = 4;
  o.max_dest_rd_atomic = 4;
  o.timeout = 8;  // 1 ms
  connect(8, o, o);
  fabric.set_link_loss(*a.hca->port(1).link(), 0.05);
  fabric.set_link_loss(*b.hca->port(1).link(), 0.05);
  constexpr uint32_t kMessages = 300;
  for (uint32_t i = 0; i < kMessages; ++i) {
    const uint32_t n = 1 + (i * 997) % 5000;  // 1 to 5 packets
    fill(a, i * 8192, n, static_cast<uint8_t>(i));
    ASSERT_EQ(post_recv(b, i, {sge(b, i * 8192, 8192)}), 0);
    ASSERT_EQ(post_send(a, i, wr_opcode::kSend, {sge(a, i * 8192, n)}), 0);
  }
  // READs and WRITEs in the same stream.
  fill(b, 0x300000, 20000, 1);
  fill(a, 0x340000, 20000, 2);
  ASSERT_EQ(post_send(a, 1000, wr_opcode::kRdmaRead, {sge(a, 0x300000, 20000)}, send_flag::kSignaled,
                      b.base() + 0x300000, b.key),
            0);
  ASSERT_EQ(post_send(a, 1001, wr_opcode::kRdmaWrite, {sge(a, 0x340000, 20000)}, send_flag::kSignaled,
                      b.base() + 0x340000, b.key),
            0);
  // Atomics too: one whose ACK is lost is answered again from the
  // responder's cache, never executed twice.
  constexpr uint32_t kAdds = 60;
  for (uint32_t i = 0; i < kAdds; ++i) {
    SendWr wr;
    wr.wr_id = 2000 + i;
    wr.opcode = wr_opcode::kAtomicFetchAndAdd;
    wr.flags = send_flag::kSignaled;
    wr.remote_addr = b.base() + 0x3F0000;
    wr.rkey = b.key;
    wr.compare_add = 1;
    ASSERT_EQ(post(a, wr, {sge(a, 0x3F0000 + 8 * i, 8)}), 0);
  }
  sim.run();
  EXPECT_GT(fabric.stats().drops(DropReason::Loss), 10u);
  uint64_t counter;
  std::memcpy(&counter, b.at(0x3F0000), 8);
  EXPECT_EQ(counter, kAdds);
  for (uint32_t i = 0; i < kAdds; ++i) {
    uint64_t original;
    std::memcpy(&original, a.at(0x3F0000 + 8 * i), 8);
    EXPECT_EQ(original, i);
  }
  ASSERT_EQ(b.rec.recvs.size(), kMessages);
  for (uint32_t i = 0; i < kMessages; ++i) {
    const uint32_t n = 1 + (i * 997) % 5000;
    ASSERT_EQ(b.rec.recvs[i].status, wc_status::kSuccess);
    ASSERT_EQ(b.rec.recvs[i].wr_id, i);
    ASSERT_EQ(b.rec.recvs[i].byte_len, n);
    ASSERT_EQ(b.read(i * 8192, n), a.read(i * 8192, n)) << i;
  }
  ASSERT_EQ(a.rec.sends.size(), kMessages + 2 + kAdds);
  for (uint32_t i = 0; i < kMessages + 2 + kAdds; ++i) {
    ASSERT_EQ(a.rec.sends[i].status, wc_status::kSuccess) << i;
    ASSERT_EQ(a.rec.sends[i].wr_id, i < kMessages ? i : i < kMessages + 2 ? 1000 + (i - kMessages) : 2000 + (i - kMessages - 2));
  }
  EXPECT_EQ(a.read(0x300000, 20000), b.read(0x300000, 20000));
  EXPECT_EQ(b.read(0x340000, 20000), a.read(0x340000, 20000));
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kRts);
}

TEST_F(RcRetryTest, LinkDownExhaustsTheRetryCount) {
  QpOptions o;
  o.timeout = 10;  // 4.096 us * 2^10
  o.retry_cnt = 3;
  connect(2, o, {});
  fabric.set_link_up(*a.hca->port(1).link(), false);
  ASSERT_EQ(post_recv(a, 50, {sge(a, 0, 64)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 100)}), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kRdmaWrite, {sge(a, 0, 100)}, 0, b.base(), b.key), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 2u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRetryExcErr);
  EXPECT_EQ(a.rec.sends[0].wr_id, 1u);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kWrFlushErr);
  EXPECT_EQ(a.rec.sends[1].wr_id, 2u);
  // The first send and retry_cnt retries, each followed by a full timeout.
  EXPECT_EQ(a.rec.send_times[0], sim::Time::ns(4096) * 1024 * 4);
  ASSERT_EQ(a.rec.recvs.size(), 1u);
  EXPECT_EQ(a.rec.recvs[0].status, wc_status::kWrFlushErr);
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kError);
  // A later post completes at once with WR_FLUSH_ERR.
  ASSERT_EQ(post_send(a, 3, wr_opcode::kSend, {sge(a, 0, 1)}), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 3u);
  EXPECT_EQ(a.rec.sends[2].status, wc_status::kWrFlushErr);
  EXPECT_EQ(a.rec.sends[2].wr_id, 3u);
}

}  // namespace
}  // namespace ibfab::fabric::testing
