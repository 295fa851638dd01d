// clean_cq (api/verbs/verbs_cq.cpp), what a QP's move to RESET and its
// destruction do to its CQs: on a ring laid out by hand, the QP's CQEs not
// yet polled go, the others stay in their order, the consumer index moves
// past the gap, and receives taken from an SRQ go back to it.
#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <vector>

#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {
namespace {

using api::rings::Cqe;
using api::rings::CqRing;

class CqClean : public ::testing::Test {
 protected:
  static constexpr uint32_t kDepth = 8;
  void SetUp() override {
    cq_.ring = new (mem_.data()) CqRing;
    cq_.depth = kDepth;
  }
  // Writes CQEs of these QPs (the wr_id counts them) as the engine would,
  // from the ring's current head.
  void write(std::vector<uint32_t> qps, uint8_t flags = 0) {
    uint32_t head = cq_.ring->head.value.load();
    for (uint32_t qp : qps) {
      Cqe& e = cq_.ring->entries()[head & (kDepth - 1)];
      e = Cqe{};
      e.qp_num = qp;
      e.wr_id = next_wr_id_++;
      e.flags = flags;
      ++head;
    }
    cq_.ring->head.value.store(head);
  }
  // What is left between the consumer index and head: (qp_num, wr_id).
  std::vector<std::pair<uint32_t, uint64_t>> left() const {
    std::vector<std::pair<uint32_t, uint64_t>> out;
    for (uint32_t i = cq_.tail; i != cq_.ring->head.value.load(); ++i) {
      const Cqe& e = cq_.ring->entries()[i & (kDepth - 1)];
      out.emplace_back(e.qp_num, e.wr_id);
    }
    return out;
  }
  void consume(uint32_t n) {
    cq_.tail += n;
    cq_.ring->tail.value.store(cq_.tail);
  }

  std::vector<uint64_t> mem_ = std::vector<uint64_t>(CqRing::bytes(kDepth) / sizeof(uint64_t) + 1);
  Cq cq_;
  uint64_t next_wr_id_ = 1;
};

TEST_F(CqClean, TakesOneQpsCompletionsAndKeepsTheOthersInOrder) {
  write({7, 9, 7, 9, 9, 7});
  clean_cq(cq_, 7, nullptr);
  using L = std::vector<std::pair<uint32_t, uint64_t>>;
  EXPECT_EQ(left(), (L{{9, 2}, {9, 4}, {9, 5}}));
  EXPECT_EQ(cq_.tail, 3u);
  EXPECT_EQ(cq_.ring->tail.value.load(), 3u) << "the engine sees the room made";
}

TEST_F(CqClean, WorksAcrossTheRingsWrapAndLeavesPolledOnesAlone) {
  write({1, 1, 1, 1, 1, 1});
  consume(6);
  write({5, 3, 5, 3, 5});  // slots 6, 7, 0, 1, 2
  clean_cq(cq_, 5, nullptr);
  using L = std::vector<std::pair<uint32_t, uint64_t>>;
  EXPECT_EQ(left(), (L{{3, 8}, {3, 10}}));
  EXPECT_EQ(cq_.tail, 9u);
  clean_cq(cq_, 3, nullptr);
  EXPECT_TRUE(left().empty());
  EXPECT_EQ(cq_.ring->tail.value.load(), 11u);
}

TEST_F(CqClean, NothingOfTheQpLeavesTheRingAsItWas) {
  write({2, 4});
  clean_cq(cq_, 6, nullptr);
  using L = std::vector<std::pair<uint32_t, uint64_t>>;
  EXPECT_EQ(left(), (L{{2, 1}, {4, 2}}));
  EXPECT_EQ(cq_.tail, 0u);
}

TEST_F(CqClean, ReceivesTakenFromAnSrqGoBackToIt) {
  Srq srq;
  write({4}, Cqe::kConnected);                      // a send
  write({4, 4}, Cqe::kConnected | Cqe::kReceive);  // two receives from the SRQ
  clean_cq(cq_, 4, &srq);
  EXPECT_TRUE(left().empty());
  EXPECT_EQ(srq.done.load(), 2u);
}

}  // namespace
}  // namespace ibfab::verbs
