#include "sm/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>

namespace ibfab::sm {
namespace {

// The same pushes and pops on a RingQueue and a std::deque, across growth
// and wrap-around, leave the same elements in the same order.
TEST(RingQueue, BehavesAsADequeAtBothEnds) {
  RingQueue<std::string> q;
  std::deque<std::string> model;
  int n = 0;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < round % 7; ++i) {
      const std::string v = std::to_string(n++);
      q.emplace_back() = v;
      model.push_back(v);
    }
    if (round % 3 == 0) {
      const std::string v = std::to_string(n++);
      q.emplace_front() = v;
      model.push_front(v);
    }
    for (int i = 0; i < round % 4 && !model.empty(); ++i) {
      ASSERT_EQ(q.front(), model.front());
      q.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(q.size(), model.size());
  }
  while (!model.empty()) {
    ASSERT_EQ(q.front(), model.front());
    q.pop_front();
    model.pop_front();
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace ibfab::sm
