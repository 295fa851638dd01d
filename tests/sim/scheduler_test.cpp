#include "sim/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <queue>
#include <string>
#include <vector>

#include "sim/rng.h"
#include "sim/simulator.h"

namespace ibfab::sim {
namespace {

QueueEntry entry(int64_t when, uint64_t seq, uint32_t slot = 0) {
  return QueueEntry{when, seq << QueueEntry::kSlotBits | slot};
}

TEST(QueueEntry, OrdersByTimeThenSequenceNeverBySlot) {
  EXPECT_LT(entry(1, 9), entry(2, 0));
  EXPECT_LT(entry(5, 1, 900), entry(5, 2, 3));
  EXPECT_FALSE(entry(5, 2, 3) < entry(5, 1, 900));
  EXPECT_EQ(entry(5, 1, 77).slot(), 77u);
}

class EveryScheduler : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Scheduler> make() {
    auto s = make_scheduler(GetParam());
    EXPECT_NE(s, nullptr);
    return s;
  }

  // Interleaves inserts and pops as a simulation does (never inserting
  // before the last popped time) and checks every pop against a reference.
  void hold_model(int64_t spread, int rounds, uint64_t seed) {
    auto sched = make();
    Rng rng(seed);
    std::vector<QueueEntry> ref;
    uint64_t seq = 0;
    int64_t now = 0;
    for (int round = 0; round < rounds; ++round) {
      if (rng.below(3) != 0 || sched->empty()) {
        const int64_t when = now + static_cast<int64_t>(rng.below(static_cast<uint64_t>(spread)));
        const QueueEntry e = entry(when, seq++, static_cast<uint32_t>(round & 0xffff));
        sched->insert(e);
        ref.push_back(e);
      } else {
        auto it = std::min_element(ref.begin(), ref.end());
        ASSERT_EQ(sched->top().when, it->when) << "round " << round;
        ASSERT_EQ(sched->top().order, it->order) << "round " << round;
        now = it->when;
        sched->pop();
        ref.erase(it);
      }
      ASSERT_EQ(sched->size(), ref.size());
    }
    while (!ref.empty()) {
      auto it = std::min_element(ref.begin(), ref.end());
      ASSERT_EQ(sched->top().order, it->order);
      sched->pop();
      ref.erase(it);
    }
    EXPECT_TRUE(sched->empty());
  }
};

TEST_P(EveryScheduler, PopsInStrictOrderWithNarrowTimes) { hold_model(50, 20'000, 3); }
TEST_P(EveryScheduler, PopsInStrictOrderWithWideTimes) { hold_model(int64_t{1} << 40, 20'000, 4); }

TEST_P(EveryScheduler, AFloodAtOneInstantKeepsInsertionOrder) {
  auto sched = make();
  for (uint64_t i = 0; i < 5000; ++i) sched->insert(entry(1000, i, static_cast<uint32_t>(i)));
  sched->insert(entry(999, 5000));
  EXPECT_EQ(sched->top().when, 999);
  sched->pop();
  for (uint64_t i = 0; i < 5000; ++i) {
    ASSERT_EQ(sched->top().order >> QueueEntry::kSlotBits, i);
    sched->pop();
  }
  EXPECT_TRUE(sched->empty());
}

// A scheduler checked against a reference queue: add() inserts into both,
// pop() checks the scheduler's earliest entry is the reference's and pops
// both (false once the reference is empty).
struct Checked {
  std::unique_ptr<Scheduler> sched;
  static constexpr auto later = [](const QueueEntry& a, const QueueEntry& b) { return b < a; };
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, decltype(later)> ref{later};
  uint64_t seq = 0;

  void add(int64_t when) {
    const QueueEntry e = entry(when, seq, static_cast<uint32_t>(seq & 0xffff));
    ++seq;
    sched->insert(e);
    ref.push(e);
  }
  // The earliest entry's time, after checking it; precondition: !ref.empty().
  int64_t pop() {
    EXPECT_EQ(sched->top().order, ref.top().order);
    const int64_t when = sched->top().when;
    sched->pop();
    ref.pop();
    return when;
  }
  void drain() {
    while (!ref.empty()) pop();
    EXPECT_TRUE(sched->empty());
  }
};

// A far-future entry (a timer, or a cancelled one not yet surfaced) holds
// the ladder's ranges up while a burst lands before them, in rising time as
// packets queue on one port, with a few out-of-order entries and pops mixed
// in; then the set empties and a second burst follows.
TEST_P(EveryScheduler, ABurstBehindAFarEntryPopsInOrder) {
  Checked c{make()};
  Rng rng(11);
  for (int round = 0; round < 2; ++round) {
    const int64_t base = round * (int64_t{1} << 41);
    c.add(base + (int64_t{1} << 40));
    c.add(base + 5);
    c.add(base + 7);
    c.pop();
    for (int i = 0; i < 30'000; ++i) {
      c.add(base + 10 + 25 * i);
      if (i % 7 == 0) c.add(base + 10 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(25 * i + 1))));
      if (i % 5 == 0) c.pop();
    }
    c.drain();
  }
}

// A symmetric fabric's burst: thousands of entries at one instant (a bucket
// that cannot be subdivided), then a steady stream where each pop is
// followed by inserts just after the earliest entry and after all the
// others, so the earliest tier never runs dry: every insert position and
// the reclaiming of popped slots, against a reference queue.
TEST_P(EveryScheduler, AnEqualTimeBurstThenAStreamThatNeverRunsDry) {
  Checked c{make()};
  for (int i = 0; i < 3'000; ++i) c.add(1'000);
  c.add(int64_t{1} << 40);  // a far timer
  Rng rng(5);
  for (int i = 0; i < 100'000; ++i) {
    const int64_t now = c.pop();
    c.add(now + 1 + static_cast<int64_t>(rng.below(3)));
    if (i % 2 == 0) c.add(now + 2'000 + static_cast<int64_t>(rng.below(50)));
    if (i % 3 == 0) c.pop();
  }
  c.drain();
}

TEST_P(EveryScheduler, DrivesASimulatorToTheSameResultAsTheDefault) {
  auto trace = [](std::unique_ptr<Scheduler> s) {
    Simulator sim(9, std::move(s));
    std::vector<int64_t> seen;
    struct Chain {
      Simulator* sim;
      std::vector<int64_t>* seen;
      int left;
      void fire() {
        seen->push_back(sim->now().ps());
        if (--left > 0) sim->schedule(Time::ps(static_cast<int64_t>(sim->rng().below(5000))), [this] { fire(); });
      }
    };
    std::vector<Chain> chains(300, Chain{&sim, &seen, 40});
    for (auto& c : chains) sim.schedule(Time::zero(), [p = &c] { p->fire(); });
    sim.run();
    return seen;
  };
  EXPECT_EQ(trace(make()), trace(nullptr));
}

INSTANTIATE_TEST_SUITE_P(Schedulers, EveryScheduler,
                         ::testing::Values("heap", "heap4", "heap8", "ladder"));

TEST(MakeScheduler, RejectsUnknownNames) {
  EXPECT_EQ(make_scheduler("calendar-of-doom"), nullptr);
}

}  // namespace
}  // namespace ibfab::sim
