// UD traffic between QPs of different hosts on an in-process fabric: what
// the receiver's completions and buffers hold, the error completions
// hardware reports, and completion events.
#include <poll.h>

#include <thread>

#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

class VerbsUd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    use_embedded_fabric();
    ::setenv("IBFAB_RX_GRACE_US", "50000", 1);  // 50 ms: wide enough for a loaded machine, see the tests below
  }
  void SetUp() override {
    ASSERT_TRUE(a_.ok());
    ASSERT_TRUE(b_.ok());
    ASSERT_EQ(a_.to_rts(), 0);
    ASSERT_EQ(b_.to_rts(), 0);
    ah_ = a_.ah_to(b_.lid);
    ASSERT_NE(ah_, nullptr);
  }
  void TearDown() override { ibv_destroy_ah(ah_); }
  // A UD QP of b's completing on `cq`, in RTR (it receives); null on failure.
  ibv_qp* receiver_on(ibv_cq* cq, uint32_t depth) {
    ibv_qp_init_attr qa{};
    qa.send_cq = qa.recv_cq = cq;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = depth;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    qa.qp_type = IBV_QPT_UD;
    ibv_qp* qp = ibv_create_qp(b_.pd, &qa);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qkey = kQkey;
    if (!qp || ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) != 0)
      return nullptr;
    attr.qp_state = IBV_QPS_RTR;
    return ibv_modify_qp(qp, &attr, IBV_QP_STATE) == 0 ? qp : nullptr;
  }
  Host a_{0};  // H3
  Host b_{1};  // another host
  ibv_ah* ah_ = nullptr;
};

TEST_F(VerbsUd, SendArrivesAfterTheGrhSpaceWithTheSendersAddress) {
  std::memcpy(a_.buf.data(), "hello, fabric", 14);
  std::memset(b_.buf.data(), 0x5A, 128);
  ASSERT_EQ(b_.post_recv(7, 0, 128), 0);
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 9, 0, 14), 0);
  const auto sent = poll_for(a_.cq, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sent[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(sent[0].wr_id, 9u);
  const auto got = poll_for(b_.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  const ibv_wc& wc = got[0];
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.wr_id, 7u);
  EXPECT_EQ(wc.byte_len, 40u + 14u);
  EXPECT_EQ(wc.src_qp, a_.qp->qp_num);
  EXPECT_EQ(wc.qp_num, b_.qp->qp_num);
  EXPECT_EQ(wc.slid, a_.lid);
  EXPECT_EQ(wc.sl, 0);
  EXPECT_EQ(wc.pkey_index, 0);
  EXPECT_FALSE(wc.wc_flags & IBV_WC_GRH);  // no GRH: the first 40 bytes are left alone
  EXPECT_EQ(b_.buf[0], 0x5A);
  EXPECT_EQ(b_.buf[39], 0x5A);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 40, "hello, fabric", 14), 0);
}

TEST_F(VerbsUd, GlobalTrafficBringsTheGrh) {
  ibv_ah* ah = a_.ah_to(b_.lid, &b_.gid);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(b_.post_recv(1, 0, 256), 0);
  ASSERT_EQ(a_.send(ah, b_.qp->qp_num, 2, 0, 100), 0);
  const auto got = poll_for(b_.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].wc_flags & IBV_WC_GRH);
  const auto* grh = reinterpret_cast<const ibv_grh*>(b_.buf.data());
  EXPECT_EQ(std::memcmp(&grh->sgid, &a_.gid, 16), 0);
  EXPECT_EQ(std::memcmp(&grh->dgid, &b_.gid, 16), 0);
  EXPECT_EQ(be32toh(grh->version_tclass_flow) >> 28, 6u);  // IP version 6
  // The reply path from the completion leads back to the sender.
  ibv_ah_attr back{};
  ASSERT_EQ(ibv_init_ah_from_wc(b_.ctx, 1, const_cast<ibv_wc*>(&got[0]), const_cast<ibv_grh*>(grh), &back), 0);
  EXPECT_EQ(back.dlid, a_.lid);
  EXPECT_EQ(back.is_global, 1);
  EXPECT_EQ(std::memcmp(&back.grh.dgid, &a_.gid, 16), 0);
  ibv_ah* reply = ibv_create_ah_from_wc(b_.pd, const_cast<ibv_wc*>(&got[0]), const_cast<ibv_grh*>(grh), 1);
  ASSERT_NE(reply, nullptr);
  ASSERT_EQ(a_.post_recv(3, 0, 256), 0);
  ASSERT_EQ(b_.send(reply, a_.qp->qp_num, 4, 1024, 10), 0);
  const auto answer = poll_for(a_.cq, 2);  // a's send completion and the reply
  int recvs = 0;
  for (const ibv_wc& w : answer) recvs += w.opcode == IBV_WC_RECV && w.status == IBV_WC_SUCCESS;
  EXPECT_EQ(recvs, 1);
  ibv_destroy_ah(reply);
  ibv_destroy_ah(ah);
}

TEST_F(VerbsUd, ImmediateInlineAndScatterGather) {
  // Inline data: the buffer need not be registered.
  const char text[] = "inline!";
  ASSERT_EQ(b_.post_recv(1, 0, 256), 0);
  ibv_sge s{reinterpret_cast<uint64_t>(text), sizeof text, 0};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htobe32(0xC0FFEE);
  wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah_;
  wr.wr.ud.remote_qpn = b_.qp->qp_num;
  wr.wr.ud.remote_qkey = kQkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  auto got = poll_for(b_.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(be32toh(got[0].imm_data), 0xC0FFEEu);
  EXPECT_STREQ(reinterpret_cast<const char*>(b_.buf.data() + 40), "inline!");
  // Gather from three SGEs, scatter into two.
  std::memcpy(a_.buf.data() + 100, "abc", 3);
  std::memcpy(a_.buf.data() + 200, "defg", 4);
  std::memcpy(a_.buf.data() + 300, "hi", 2);
  ibv_sge gather[3] = {{reinterpret_cast<uint64_t>(a_.buf.data() + 100), 3, a_.mr->lkey},
                       {reinterpret_cast<uint64_t>(a_.buf.data() + 200), 4, a_.mr->lkey},
                       {reinterpret_cast<uint64_t>(a_.buf.data() + 300), 2, a_.mr->lkey}};
  ibv_sge scatter[2] = {{reinterpret_cast<uint64_t>(b_.buf.data() + 1000), 44, b_.mr->lkey},
                        {reinterpret_cast<uint64_t>(b_.buf.data() + 2000), 64, b_.mr->lkey}};
  ibv_recv_wr rw{};
  rw.wr_id = 5;
  rw.sg_list = scatter;
  rw.num_sge = 2;
  ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(ibv_post_recv(b_.qp, &rw, &rbad), 0);
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = 0;  // unsignalled: no send completion
  wr.sg_list = gather;
  wr.num_sge = 3;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  got = poll_for(b_.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].byte_len, 49u);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 1040, "abcd", 4), 0);  // 40 GRH bytes, then 4 bytes fit
  EXPECT_EQ(std::memcmp(b_.buf.data() + 2000, "efghi", 5), 0);
  const auto sends = poll_for(a_.cq, 2, 100);
  ASSERT_EQ(sends.size(), 1u);  // only the signalled inline send
  EXPECT_EQ(sends[0].wr_id, 0u);
}

TEST_F(VerbsUd, ReceiveBufferTooSmallIsALocalLengthError) {
  ASSERT_EQ(b_.post_recv(11, 0, 60), 0);  // 40 + 20 bytes of room
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 1, 0, 100), 0);
  const auto got = poll_for(b_.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(got[0].wr_id, 11u);
  // The QP is in the error state now: what is posted is flushed.
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(ibv_query_qp(b_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  ASSERT_EQ(b_.post_recv(12, 0, 60), 0);
  const auto flushed = poll_for(b_.cq, 1);
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(flushed[0].wr_id, 12u);
}

TEST_F(VerbsUd, ABadLkeyIsAProtectionErrorAndNothingIsSent) {
  ASSERT_EQ(b_.post_recv(1, 0, 256), 0);
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 21, 0, 10, IBV_SEND_SIGNALED, a_.mr->lkey ^ 0x100), 0);
  const auto sent = poll_for(a_.cq, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(sent[0].wr_id, 21u);
  EXPECT_TRUE(poll_for(b_.cq, 1, 100).empty());  // no completion for data that was not sent
}

TEST_F(VerbsUd, SgeOutsideTheRegionIsAProtectionError) {
  ibv_sge s{reinterpret_cast<uint64_t>(a_.buf.data() + a_.buf.size() - 4), 8, a_.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah_;
  wr.wr.ud.remote_qpn = b_.qp->qp_num;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  const auto sent = poll_for(a_.cq, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_LOC_PROT_ERR);
}

TEST_F(VerbsUd, MessageLargerThanTheMtuIsALengthError) {
  ASSERT_EQ(b_.post_recv(1, 0, 8192), 0);
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 1, 0, 4097), 0);
  const auto sent = poll_for(a_.cq, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_LOC_LEN_ERR);
}

TEST_F(VerbsUd, NoReceivePostedPastTheGraceMeansDropped) {
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 1, 0, 10), 0);
  ASSERT_EQ(poll_for(a_.cq, 1).size(), 1u);
  // The grace is wall time: this sleep measures out more than it (it is no
  // synchronisation). Then two requests, each answered before the next is
  // sent, make sure that the engine has run its rings once since, and
  // dropped the message, before the receive is posted.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // past the 50 ms grace
  for (int i = 0; i < 2; ++i) {
    ibv_cq* cq = ibv_create_cq(b_.ctx, 1, nullptr, nullptr, 0);
    ASSERT_NE(cq, nullptr);
    ASSERT_EQ(ibv_destroy_cq(cq), 0);
  }
  ASSERT_EQ(b_.post_recv(1, 0, 256), 0);
  EXPECT_TRUE(poll_for(b_.cq, 1, 100).empty());
}

// A grace no loaded machine outlasts: a message held for a receive is
// certainly delivered. (CTest runs each test in a process of its own, so
// each fixture's grace is the engine's.)
class VerbsUdLongGrace : public VerbsUd {
 protected:
  static void SetUpTestSuite() {
    use_embedded_fabric();
    ::setenv("IBFAB_RX_GRACE_US", "3600000000", 1);  // an hour
  }
};

TEST_F(VerbsUdLongGrace, AMessageWaitsOutTheGraceForAReceive) {
  // Sent before the receiver posted: held (not dropped) while the receiver
  // is within the grace, then delivered in order.
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, i, 0, static_cast<uint32_t>(10 + i)), 0);
  ASSERT_EQ(poll_for(a_.cq, 3).size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(b_.post_recv(i, 256 * static_cast<uint32_t>(i), 256), 0);
  const auto got = poll_for(b_.cq, 3);
  ASSERT_EQ(got.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(got[i].byte_len, 40u + 10u + i);
}

TEST_F(VerbsUd, WrongQkeyIsDropped) {
  ASSERT_EQ(b_.post_recv(1, 0, 256), 0);
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 1, 0, 10, IBV_SEND_SIGNALED, 0, 0x1234), 0);
  EXPECT_EQ(poll_for(a_.cq, 1).size(), 1u);
  EXPECT_TRUE(poll_for(b_.cq, 1, 100).empty());
  // The QP's own Q_Key when the high bit is set.
  ASSERT_EQ(a_.send(ah_, b_.qp->qp_num, 1, 0, 10, IBV_SEND_SIGNALED, 0, 0x80000000), 0);
  EXPECT_EQ(poll_for(b_.cq, 1).size(), 1u);
}

TEST_F(VerbsUd, CompletionChannelWakesOnTheNextCompletion) {
  ibv_comp_channel* ch = ibv_create_comp_channel(b_.ctx);
  ASSERT_NE(ch, nullptr);
  int cookie = 0;
  ibv_cq* cq = ibv_create_cq(b_.ctx, 16, &cookie, ch, 0);
  ASSERT_NE(cq, nullptr);
  ibv_qp* qp = receiver_on(cq, 4);
  ASSERT_NE(qp, nullptr);
  ibv_sge s{reinterpret_cast<uint64_t>(b_.buf.data()), 256, b_.mr->lkey};
  ibv_recv_wr rw{};
  rw.sg_list = &s;
  rw.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(ibv_post_recv(qp, &rw, &rbad), 0);
  ASSERT_EQ(ibv_post_recv(qp, &rw, &rbad), 0);
  // Armed for solicited events only: an unsolicited message does not wake.
  ASSERT_EQ(ibv_req_notify_cq(cq, 1), 0);
  ASSERT_EQ(a_.send(ah_, qp->qp_num, 1, 0, 10), 0);
  pollfd p{ch->fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 100), 0);
  ASSERT_EQ(a_.send(ah_, qp->qp_num, 2, 0, 10, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED), 0);
  ASSERT_EQ(::poll(&p, 1, 30000), 1);
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  EXPECT_EQ(ev_cq, cq);
  EXPECT_EQ(ev_ctx, &cookie);
  ibv_ack_cq_events(cq, 1);
  EXPECT_EQ(cq->comp_events_completed, 1u);
  EXPECT_EQ(poll_for(cq, 2).size(), 2u);
  // Not re-armed: no further event.
  ASSERT_EQ(ibv_post_recv(qp, &rw, &rbad), 0);
  ASSERT_EQ(a_.send(ah_, qp->qp_num, 3, 0, 10, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED), 0);
  EXPECT_EQ(poll_for(cq, 1).size(), 1u);
  EXPECT_EQ(::poll(&p, 1, 50), 0);
  ASSERT_EQ(ibv_destroy_qp(qp), 0);
  ASSERT_EQ(ibv_destroy_cq(cq), 0);
  ASSERT_EQ(ibv_destroy_comp_channel(ch), 0);
}

TEST_F(VerbsUd, CqOverrunRaisesCqErrAndLosesNoLaterCompletionSilently) {
  ibv_cq* cq = ibv_create_cq(b_.ctx, 2, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ibv_qp* qp = receiver_on(cq, 8);
  ASSERT_NE(qp, nullptr);
  for (int i = 0; i < 4; ++i) {
    ibv_sge s{reinterpret_cast<uint64_t>(b_.buf.data() + 512 * i), 512, b_.mr->lkey};
    ibv_recv_wr rw{};
    rw.wr_id = static_cast<uint64_t>(i);
    rw.sg_list = &s;
    rw.num_sge = 1;
    ibv_recv_wr* rbad = nullptr;
    ASSERT_EQ(ibv_post_recv(qp, &rw, &rbad), 0);
  }
  for (int i = 0; i < 4; ++i) ASSERT_EQ(a_.send(ah_, qp->qp_num, 1, 0, 10), 0);
  pollfd p{b_.ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 30000), 1);
  ibv_async_event ev{};
  ASSERT_EQ(ibv_get_async_event(b_.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
  EXPECT_EQ(ev.element.cq, cq);
  ibv_ack_async_event(&ev);
  EXPECT_EQ(poll_exactly(cq, 2).size(), 2u);  // the ring held two; the others were not completed
  ASSERT_EQ(ibv_destroy_qp(qp), 0);
  ASSERT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(VerbsUd, ExtendedCqReadsCompletionsOneByOne) {
  ibv_cq_init_attr_ex ca{};
  ca.cqe = 8;
  ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_IMM;
  ibv_cq_ex* cqx = ibv_create_cq_ex(b_.ctx, &ca);
  ASSERT_NE(cqx, nullptr);
  ibv_qp* qp = receiver_on(ibv_cq_ex_to_cq(cqx), 4);
  ASSERT_NE(qp, nullptr);
  ibv_poll_cq_attr pa{};
  EXPECT_EQ(ibv_start_poll(cqx, &pa), ENOENT);  // empty: no ibv_end_poll
  for (uint64_t i = 0; i < 2; ++i) {
    ibv_sge s{reinterpret_cast<uint64_t>(b_.buf.data() + 512 * i), 512, b_.mr->lkey};
    ibv_recv_wr rw{};
    rw.wr_id = 100 + i;
    rw.sg_list = &s;
    rw.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_recv(qp, &rw, &bad), 0);
    ASSERT_EQ(a_.send(ah_, qp->qp_num, 1, 0, static_cast<uint32_t>(10 + i)), 0);
  }
  int seen = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (seen < 2 && std::chrono::steady_clock::now() < end) {
    if (ibv_start_poll(cqx, &pa) != 0) continue;
    do {
      EXPECT_EQ(cqx->status, IBV_WC_SUCCESS);
      EXPECT_EQ(cqx->wr_id, 100u + static_cast<unsigned>(seen));
      EXPECT_EQ(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
      EXPECT_EQ(ibv_wc_read_byte_len(cqx), 40u + 10u + static_cast<unsigned>(seen));
      EXPECT_EQ(ibv_wc_read_src_qp(cqx), a_.qp->qp_num);
      EXPECT_EQ(ibv_wc_read_slid(cqx), a_.lid);
      ++seen;
    } while (ibv_next_poll(cqx) == 0);
    ibv_end_poll(cqx);
  }
  EXPECT_EQ(seen, 2);
  // Timestamps are not offered.
  ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
  errno = 0;
  EXPECT_EQ(ibv_create_cq_ex(b_.ctx, &ca), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  ASSERT_EQ(ibv_destroy_qp(qp), 0);
  ASSERT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
}

TEST_F(VerbsUd, LoopbackToAnotherQpOfTheSamePort) {
  Host c{0};
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c.to_rts(), 0);
  ASSERT_EQ(c.post_recv(1, 0, 256), 0);
  ibv_ah* self = a_.ah_to(a_.lid);
  ASSERT_EQ(a_.send(self, c.qp->qp_num, 1, 0, 10), 0);
  const auto got = poll_for(c.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src_qp, a_.qp->qp_num);
  EXPECT_EQ(got[0].slid, a_.lid);
  ibv_destroy_ah(self);
}

}  // namespace
}  // namespace ibfab::testing
