// CQs through the library on an in-process fabric: ibv_resize_cq as mlx5
// resizes (up and down, the completions not yet polled kept, EINVAL below
// them or out of range), and ibv_req_notify_cq's solicited-only arming for
// RC receives.
#include <poll.h>

#include <cstring>

#include "tests/api/verbs_ex_pair.h"

namespace ibfab::testing {
namespace {

class VerbsCq : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(connect_pair(a_, b_)); }
  // b_ SENDs `n` zero-length messages (`flags`) that a_ receives into
  // receives of wr_ids first, first + 1, ...; returns once b_ has had them
  // acknowledged, so a_'s receive completions are in a_'s CQ, unpolled.
  void receive_at_a(int n, uint64_t first, unsigned flags = 0) {
    for (int i = 0; i < n; ++i) ASSERT_EQ(a_.post_recv(first + static_cast<uint64_t>(i), 0, 16), 0);
    ibv_qp_ex* q = b_.qpx;
    ibv_wr_start(q);
    for (int i = 0; i < n; ++i) {
      q->wr_id = static_cast<uint64_t>(i);
      q->wr_flags = IBV_SEND_SIGNALED | flags;
      ibv_wr_send(q);
      ibv_wr_set_sge(q, b_.mr->lkey, b_.at(0), 0);
    }
    ASSERT_EQ(ibv_wr_complete(q), 0);
    ASSERT_EQ(poll_for(b_.cq, static_cast<std::size_t>(n)).size(), static_cast<std::size_t>(n));
  }
  // Whether a completion event waits on a_'s channel. A request to the
  // engine first: it answers after it has written every event of the
  // completions already in the CQ.
  bool event_waiting() {
    ibv_port_attr pa;
    EXPECT_EQ(ibv_query_port(a_.ctx, 1, &pa), 0);
    pollfd p{a_.channel->fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
  ExSide a_{0, IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0x10, true};
  ExSide b_{1, IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0x20};
};

TEST_F(VerbsCq, ResizingKeepsTheCompletionsNotYetPolled) {
  receive_at_a(5, 100);
  EXPECT_EQ(ibv_resize_cq(a_.cq, 4), EINVAL) << "five wait; four would not hold them";
  EXPECT_EQ(a_.cq->cqe, 256);
  ASSERT_EQ(ibv_resize_cq(a_.cq, 6), 0);
  EXPECT_EQ(a_.cq->cqe, 8) << "the power of two that holds it";
  const std::vector<ibv_wc> wc = poll_exactly(a_.cq, 5);
  ASSERT_EQ(wc.size(), 5u);
  for (std::size_t i = 0; i < wc.size(); ++i) {
    EXPECT_EQ(wc[i].wr_id, 100 + i);
    EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(wc[i].opcode, IBV_WC_RECV);
  }
  // Down to one CQE, and up again past where it started; completions keep
  // coming into the new ring.
  ASSERT_EQ(ibv_resize_cq(a_.cq, 1), 0);
  EXPECT_EQ(a_.cq->cqe, 1);
  receive_at_a(1, 200);
  ASSERT_EQ(ibv_resize_cq(a_.cq, 1000), 0);
  EXPECT_EQ(a_.cq->cqe, 1024);
  receive_at_a(3, 300);
  const std::vector<ibv_wc> more = poll_exactly(a_.cq, 4);
  ASSERT_EQ(more.size(), 4u);
  EXPECT_EQ(more[0].wr_id, 200u);
  EXPECT_EQ(more[3].wr_id, 302u);
}

TEST_F(VerbsCq, ResizeRefusesSizesOutOfRange) {
  ibv_device_attr attr;
  ASSERT_EQ(ibv_query_device(a_.ctx, &attr), 0);
  EXPECT_EQ(ibv_resize_cq(a_.cq, 0), EINVAL);
  EXPECT_EQ(ibv_resize_cq(a_.cq, -1), EINVAL);
  EXPECT_EQ(ibv_resize_cq(a_.cq, attr.max_cqe + 1), EINVAL);
  EXPECT_EQ(a_.cq->cqe, 256);
  EXPECT_EQ(ibv_resize_cq(a_.cq, 200), 0) << "the same size: nothing to do";
  EXPECT_EQ(a_.cq->cqe, 256);
}

TEST_F(VerbsCq, ACqArmedForSolicitedEventsWakesOnlyForASolicitedSend) {
  ASSERT_EQ(ibv_req_notify_cq(a_.cq, 1), 0);
  receive_at_a(1, 1);
  EXPECT_FALSE(event_waiting()) << "an unsolicited SEND completes without an event";
  ASSERT_EQ(poll_exactly(a_.cq, 1).size(), 1u);
  receive_at_a(1, 2, IBV_SEND_SOLICITED);
  ASSERT_TRUE(event_waiting()) << "a solicited SEND's completion wakes it";
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  ASSERT_EQ(ibv_get_cq_event(a_.channel, &cq, &context), 0);
  EXPECT_EQ(cq, a_.cq);
  ibv_ack_cq_events(cq, 1);
  const std::vector<ibv_wc> wc = poll_exactly(a_.cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 2u);
}

TEST_F(VerbsCq, AResizedCqKeepsItsArming) {
  ASSERT_EQ(ibv_req_notify_cq(a_.cq, 0), 0);
  ASSERT_EQ(ibv_resize_cq(a_.cq, 16), 0);
  receive_at_a(1, 1);
  EXPECT_TRUE(event_waiting());
}

}  // namespace
}  // namespace ibfab::testing
