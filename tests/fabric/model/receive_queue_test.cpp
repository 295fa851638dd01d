// Receive queues and SRQs: posting order, SGE copies, bounds, the limit.
#include "fabric/model/receive_queue.h"

#include <gtest/gtest.h>

namespace ibfab::fabric {
namespace {

TEST(ReceiveQueue, TakesWqesInPostingOrderWithTheirOwnSgesAcrossWrapAround) {
  ReceiveQueue rq(3, 2);
  for (uint64_t round = 0; round < 5; ++round) {
    for (uint64_t i = 0; i < 3; ++i) {
      Sge s[2] = {{round * 100 + i, static_cast<uint32_t>(i), 1}, {round * 100 + i + 50, 7, 2}};
      ASSERT_EQ(rq.post(RecvWr{round * 10 + i, static_cast<uint32_t>(i % 2 + 1), s}), 0);
    }
    for (uint64_t i = 0; i < 3; ++i) {
      const ReceiveQueue::Wqe w = rq.front();
      EXPECT_EQ(w.wr_id, round * 10 + i);
      ASSERT_EQ(w.sge.size(), i % 2 + 1);
      EXPECT_EQ(w.sge[0].addr, round * 100 + i);
      EXPECT_EQ(w.sge[0].length, i);
      if (w.sge.size() == 2) EXPECT_EQ(w.sge[1].addr, round * 100 + i + 50);
      rq.pop();
    }
    EXPECT_TRUE(rq.empty());
  }
}

TEST(ReceiveQueue, RefusesAPostPastItsDepthOrItsSges) {
  ReceiveQueue rq(2, 1);
  Sge s[2] = {};
  EXPECT_EQ(rq.post(RecvWr{1, 2, s}), EINVAL);
  EXPECT_EQ(rq.post(RecvWr{1, 1, s}), 0);
  EXPECT_EQ(rq.post(RecvWr{2, 0, s}), 0);
  EXPECT_EQ(rq.post(RecvWr{3, 1, s}), ENOMEM);
  EXPECT_EQ(rq.size(), 2u);
  EXPECT_EQ(rq.front().wr_id, 1u);
}

TEST(ReceiveQueue, TheLimitFiresOnceWhenFewerThanItRemain) {
  ReceiveQueue srq(8, 1);
  Sge s{};
  for (uint64_t i = 0; i < 6; ++i) ASSERT_EQ(srq.post(RecvWr{i, 1, &s}), 0);
  EXPECT_EQ(srq.arm_limit(9), EINVAL);
  ASSERT_EQ(srq.arm_limit(4), 0);
  EXPECT_FALSE(srq.pop());  // 5 left
  EXPECT_FALSE(srq.pop());  // 4 left
  EXPECT_TRUE(srq.pop());   // 3 left: fewer than 4
  EXPECT_EQ(srq.limit(), 0u);
  EXPECT_FALSE(srq.pop());  // disarmed until armed again
  ASSERT_EQ(srq.arm_limit(3), 0);
  EXPECT_TRUE(srq.pop());
}

}  // namespace
}  // namespace ibfab::fabric
