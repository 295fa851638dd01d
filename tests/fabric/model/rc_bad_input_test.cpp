// RC bad input: remote keys, ranges and access checked at the responder,
// misaligned atomics, READs past max_dest_rd_atomic, a SEND longer than its
// receive, and posts the QP refuses. The completion statuses and QP states
// are a ConnectX's with mlx5.
#include <gtest/gtest.h>

#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

class RcBadInputTest : public RcFixture {
 public:
  // After a remote error on A's first WQE: its status, the rest of A's
  // queue flushed, both QPs in ERR, and `event` reported at B (0: none,
  // the error is in B's receive completion).
  void expect_remote_error(uint8_t status, uint8_t event, std::size_t posted) {
    ASSERT_EQ(a.rec.sends.size(), posted);
    EXPECT_EQ(a.rec.sends[0].status, status);
    EXPECT_EQ(a.rec.sends[0].wr_id, 1u);
    for (std::size_t i = 1; i < posted; ++i) EXPECT_EQ(a.rec.sends[i].status, wc_status::kWrFlushErr);
    EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kError);
    EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kError);
    if (event == 0) {
      EXPECT_TRUE(b.rec.events.empty());
      return;
    }
    ASSERT_FALSE(b.rec.events.empty());
    EXPECT_EQ(b.rec.events[0], event);
  }
};

TEST_F(RcBadInputTest, WrongRkeyIsRemoteAccessError) {
  connect();
  ASSERT_EQ(post_recv(b, 9, {sge(b, 0, 64)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaWrite, {sge(a, 0, 100)}, send_flag::kSignaled, b.base(), b.key + 1), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 10)}), 0);
  sim.run();
  expect_remote_error(wc_status::kRemAccessErr, qp_event::kQpAccessErr, 2);
  EXPECT_EQ(*b.at(0), 0) << "nothing written";
  // B's receive is flushed with its QP.
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].status, wc_status::kWrFlushErr);
  EXPECT_EQ(b.rec.recvs[0].wr_id, 9u);
}

TEST_F(RcBadInputTest, ReadOutOfRangeIsRemoteAccessError) {
  connect();
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaRead, {sge(a, 0, 100)}, send_flag::kSignaled, b.base() + kMemSize - 50,
                      b.key),
            0);
  sim.run();
  expect_remote_error(wc_status::kRemAccessErr, qp_event::kQpAccessErr, 1);
}

TEST_F(RcBadInputTest, QpWithoutRemoteWriteRefusesAWrite) {
  QpOptions ob;
  ob.access = access::kLocalWrite | access::kRemoteRead;
  connect(2, {}, ob);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaWrite, {sge(a, 0, 8)}, send_flag::kSignaled, b.base(), b.key), 0);
  sim.run();
  expect_remote_error(wc_status::kRemAccessErr, qp_event::kQpAccessErr, 1);
}

TEST_F(RcBadInputTest, MisalignedAtomicIsInvalidRequest) {
  connect();
  SendWr wr;
  wr.wr_id = 1;
  wr.opcode = wr_opcode::kAtomicFetchAndAdd;
  wr.flags = send_flag::kSignaled;
  wr.remote_addr = b.base() + 4;
  wr.rkey = b.key;
  wr.compare_add = 1;
  ASSERT_EQ(post(a, wr, {sge(a, 0, 8)}), 0);
  sim.run();
  expect_remote_error(wc_status::kRemInvReqErr, qp_event::kQpReqErr, 1);
  EXPECT_EQ(*b.at(4), 0);
}

TEST_F(RcBadInputTest, ReadsPastMaxDestRdAtomicAreInvalidRequests) {
  QpOptions oa, ob;
  oa.max_rd_atomic = 4;
  ob.max_dest_rd_atomic = 1;
  connect(2, oa, ob);
  for (uint64_t i = 1; i <= 4; ++i)
    ASSERT_EQ(post_send(a, i, wr_opcode::kRdmaRead, {sge(a, i * 65536, 65536)}, send_flag::kSignaled, b.base(), b.key),
              0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 4u);
  // The first READ is answered; the second, while its responses still go
  // out, is one too many.
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kRemInvReqErr);
  EXPECT_EQ(a.rec.sends[2].status, wc_status::kWrFlushErr);
  EXPECT_EQ(a.rec.sends[3].status, wc_status::kWrFlushErr);
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kError);
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kError);
}

TEST_F(RcBadInputTest, RequesterKeepsToMaxRdAtomic) {
  QpOptions oa, ob;
  oa.max_rd_atomic = 1;
  ob.max_dest_rd_atomic = 1;
  connect(2, oa, ob);
  fill(b, 0, 65536, 3);
  for (uint64_t i = 1; i <= 4; ++i)
    ASSERT_EQ(post_send(a, i, wr_opcode::kRdmaRead, {sge(a, i * 65536, 65536)}, send_flag::kSignaled, b.base(), b.key),
              0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 4u);
  for (uint64_t i = 1; i <= 4; ++i) {
    EXPECT_EQ(a.rec.sends[i - 1].status, wc_status::kSuccess);
    EXPECT_EQ(a.read(i * 65536, 65536), b.read(0, 65536));
  }
}

TEST_F(RcBadInputTest, SendLongerThanItsReceive) {
  connect();
  ASSERT_EQ(post_recv(b, 7, {sge(b, 0, 100)}), 0);
  ASSERT_EQ(post_recv(b, 8, {sge(b, 0, 100)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 2000)}), 0);
  sim.run();
  expect_remote_error(wc_status::kRemInvReqErr, 0, 1);
  ASSERT_EQ(b.rec.recvs.size(), 2u);
  EXPECT_EQ(b.rec.recvs[0].status, wc_status::kLocLenErr);
  EXPECT_EQ(b.rec.recvs[0].wr_id, 7u);
  EXPECT_EQ(b.rec.recvs[1].status, wc_status::kWrFlushErr);
}

TEST_F(RcBadInputTest, PostsTheQpRefuses) {
  make_host(a, 1, 0x10000000);
  QpOptions o;
  o.caps = QpCaps{2, 2, 2, 2, 16};
  create_qp(a, o);
  // RESET, then INIT: EINVAL, as mlx5.
  EXPECT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 8)}), EINVAL);
  QpAttr attr;
  attr.state = QpState::kInit;
  attr.port = 1;
  ASSERT_EQ(a.hca->modify_qp(a.qpn, attr, qp_mask::kState | qp_mask::kPort), 0);
  EXPECT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 8)}), EINVAL);
  // Receives may be posted from INIT; more SGEs than max_recv_sge may not.
  EXPECT_EQ(post_recv(a, 1, {sge(a, 0, 8)}), 0);
  EXPECT_EQ(post_recv(a, 2, {sge(a, 0, 8), sge(a, 8, 8), sge(a, 16, 8)}), EINVAL);
  EXPECT_EQ(post_recv(a, 3, {sge(a, 0, 8)}), 0);
  EXPECT_EQ(post_recv(a, 4, {sge(a, 0, 8)}), ENOMEM) << "a queue of two";
  attr.state = QpState::kRtr;
  ASSERT_EQ(a.hca->modify_qp(a.qpn, attr, qp_mask::kState), 0);
  // From RTR sends queue (they go out at RTS); too many SGEs, a full queue,
  // an opcode the device has not: refused.
  EXPECT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 8)}, 0), 0);
  EXPECT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 8), sge(a, 8, 8), sge(a, 16, 8)}), EINVAL);
  EXPECT_EQ(post_send(a, 3, 42, {}), EINVAL);
  EXPECT_EQ(post_send(a, 4, wr_opcode::kSend, {sge(a, 0, 8)}, 0), 0);
  EXPECT_EQ(post_send(a, 5, wr_opcode::kSend, {sge(a, 0, 8)}, 0), ENOMEM);
  EXPECT_EQ(a.hca->post_send(a.qpn + 1000, SendWr{}), EINVAL) << "no such QP";
}

}  // namespace
}  // namespace ibfab::fabric::testing
