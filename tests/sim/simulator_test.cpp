#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ibfab::sim {
namespace {

TEST(Simulator, RunsEventsInTimeOrder) {
  Simulator sim;
  std::vector<int> order;
  sim.schedule(Time::ns(30), [&] { order.push_back(3); });
  sim.schedule(Time::ns(10), [&] { order.push_back(1); });
  sim.schedule(Time::ns(20), [&] { order.push_back(2); });
  sim.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sim.now(), Time::ns(30));
  EXPECT_EQ(sim.events_run(), 3u);
}

TEST(Simulator, EqualTimesRunInInsertionOrder) {
  Simulator sim;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) sim.schedule(Time::ns(5), [&order, i] { order.push_back(i); });
  sim.run();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(Simulator, ZeroDelayEventsRunAfterEarlierEventsAtTheSameTime) {
  Simulator sim;
  std::vector<std::string> order;
  sim.schedule(Time::ns(5), [&] {
    order.push_back("a");
    sim.schedule(Time::zero(), [&] { order.push_back("a0"); });
  });
  sim.schedule(Time::ns(5), [&] { order.push_back("b"); });  // queued before a0
  sim.schedule(Time::ns(6), [&] { order.push_back("c"); });
  sim.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a0", "c"}));
}

TEST(Simulator, EventsScheduledFromEventsSeeTheirTime) {
  Simulator sim;
  std::vector<int64_t> seen;
  sim.schedule(Time::ns(1), [&] {
    seen.push_back(sim.now().ps());
    sim.schedule(Time::ns(2), [&] { seen.push_back(sim.now().ps()); });
  });
  sim.run();
  EXPECT_EQ(seen, (std::vector<int64_t>{1'000, 3'000}));
}

TEST(Simulator, NegativeDelayAndPastTimesAreRejected) {
  Simulator sim;
  EXPECT_THROW(sim.schedule(Time::zero() - Time::ps(1), [] {}), std::invalid_argument);
  sim.schedule(Time::ns(10), [] {});
  sim.run();
  EXPECT_THROW(sim.schedule_at(Time::ns(5), [] {}), std::invalid_argument);
  EXPECT_EQ(sim.events_pending(), 0u);
}

TEST(Simulator, CancelPreventsTheEventAndIsIdempotent) {
  Simulator sim;
  int ran = 0;
  EventHandle h = sim.schedule(Time::ns(10), [&] { ++ran; });
  sim.schedule(Time::ns(20), [&] { ran += 10; });
  EXPECT_TRUE(sim.pending(h));
  EXPECT_TRUE(sim.cancel(h));
  EXPECT_FALSE(sim.pending(h));
  EXPECT_FALSE(sim.cancel(h));
  EXPECT_EQ(sim.events_pending(), 1u);
  sim.run();
  EXPECT_EQ(ran, 10);
}

TEST(Simulator, StaleHandlesNeverCancelANewerEventInTheSameSlot) {
  Simulator sim;
  int ran = 0;
  EventHandle old = sim.schedule(Time::ns(1), [&] { ++ran; });
  sim.run();
  EXPECT_FALSE(sim.pending(old));
  EventHandle fresh = sim.schedule(Time::ns(1), [&] { ran += 100; });
  EXPECT_EQ(fresh.slot, old.slot) << "the pool reuses slots; the generation must differ";
  EXPECT_FALSE(sim.cancel(old));
  sim.run();
  EXPECT_EQ(ran, 101);
  EXPECT_FALSE(sim.cancel(EventHandle{}));
  EXPECT_FALSE(sim.cancel(EventHandle{999999, 1}));
}

TEST(Simulator, AnEventCanCancelItselfOrOthersWhileRunning) {
  Simulator sim;
  int ran = 0;
  EventHandle later = sim.schedule(Time::ns(20), [&] { ran += 100; });
  EventHandle self;
  self = sim.schedule(Time::ns(10), [&] {
    ++ran;
    EXPECT_FALSE(sim.cancel(self)) << "a running event is no longer pending";
    EXPECT_TRUE(sim.cancel(later));
  });
  sim.run();
  EXPECT_EQ(ran, 1);
}

TEST(Simulator, CapturedStateIsDestroyedWhenRunCancelledOrAbandoned) {
  auto token = std::make_shared<int>(0);
  {
    Simulator sim;
    sim.schedule(Time::ns(1), [t = token] { ++*t; });
    EventHandle c = sim.schedule(Time::ns(2), [t = token] { ++*t; });
    sim.schedule(Time::ns(3), [t = token] { ++*t; });
    EXPECT_EQ(token.use_count(), 4);
    sim.cancel(c);
    EXPECT_EQ(token.use_count(), 3);
    sim.run_until(Time::ns(1));
    EXPECT_EQ(token.use_count(), 2);
    EXPECT_EQ(*token, 1);
  }  // the simulator dies with one event still pending
  EXPECT_EQ(token.use_count(), 1);
}

TEST(Simulator, ClearDiscardsPendingEventsAndTheirState) {
  auto token = std::make_shared<int>(0);
  Simulator sim;
  sim.schedule(Time::ns(1), [t = token] { ++*t; });
  EventHandle h = sim.schedule(Time::ns(2), [t = token] { ++*t; });
  sim.schedule(Time::zero(), [t = token] { ++*t; });
  sim.clear();
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(sim.events_pending(), 0u);
  EXPECT_FALSE(sim.pending(h));
  sim.run();
  EXPECT_EQ(*token, 0);
  sim.schedule(Time::ns(1), [t = token] { ++*t; });
  sim.run();
  EXPECT_EQ(*token, 1) << "usable after clear()";
}

TEST(Simulator, RunUntilStopsAtTheLimitAndAdvancesTime) {
  Simulator sim;
  int ran = 0;
  sim.schedule(Time::ns(10), [&] { ++ran; });
  sim.schedule(Time::ns(30), [&] { ++ran; });
  sim.run_until(Time::ns(20));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(sim.now(), Time::ns(20));
  sim.run_until(Time::ns(30));
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(sim.now(), Time::ns(30));
}

TEST(Simulator, RunUntilSkipsCancelledEventsBeyondNothing) {
  Simulator sim;
  int ran = 0;
  EventHandle h = sim.schedule(Time::ns(5), [&] { ++ran; });
  sim.cancel(h);
  sim.run_until(Time::ns(50));
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(sim.now(), Time::ns(50));
  EXPECT_FALSE(sim.step());
}

TEST(Simulator, StopReturnsAfterTheCurrentEvent) {
  Simulator sim;
  int ran = 0;
  sim.schedule(Time::ns(1), [&] { ++ran; sim.stop(); });
  sim.schedule(Time::ns(2), [&] { ++ran; });
  sim.run();
  EXPECT_EQ(ran, 1);
  sim.run();
  EXPECT_EQ(ran, 2);
}

TEST(Simulator, StepRunsExactlyOneLiveEvent) {
  Simulator sim;
  int ran = 0;
  EventHandle a = sim.schedule(Time::ns(1), [&] { ++ran; });
  sim.schedule(Time::ns(2), [&] { ++ran; });
  sim.cancel(a);
  EXPECT_TRUE(sim.step());
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(sim.step());
}

TEST(Simulator, TwoSimulatorsAreIndependent) {
  Simulator a(1), b(1);
  int ra = 0, rb = 0;
  a.schedule(Time::ns(1), [&] { ++ra; });
  b.schedule(Time::ns(2), [&] { ++rb; });
  a.run();
  EXPECT_EQ(ra, 1);
  EXPECT_EQ(rb, 0);
  EXPECT_EQ(b.now(), Time::zero());
  b.run();
  EXPECT_EQ(rb, 1);
  EXPECT_EQ(a.rng().next(), b.rng().next());
}

TEST(Simulator, ManyPendingEventsGrowThePoolAndStayOrdered) {
  Simulator sim;
  Rng rng(7);
  int64_t last = -1;
  bool ordered = true;
  for (int i = 0; i < 50'000; ++i) {
    sim.schedule(Time::ps(static_cast<int64_t>(rng.below(1'000'000))), [&] {
      ordered = ordered && sim.now().ps() >= last;
      last = sim.now().ps();
    });
  }
  EXPECT_EQ(sim.events_pending(), 50'000u);
  sim.run();
  EXPECT_TRUE(ordered);
  EXPECT_EQ(sim.events_run(), 50'000u);
}

TEST(Simulator, TombstonesBehindAFarOffLiveEventArePurged) {
  // A periodic sweep far ahead, and timeouts after it armed and cancelled
  // by the thousand (answered requests): the queue stays bounded.
  Simulator sim;
  int swept = 0;
  sim.schedule(Time::s(10), [&] { ++swept; });
  std::size_t most = 0;
  for (int i = 0; i < 100'000; ++i) {
    const EventHandle h = sim.schedule(Time::s(11) + Time::ps(i), [] { ADD_FAILURE() << "a cancelled timeout ran"; });
    ASSERT_TRUE(sim.cancel(h));
    most = std::max(most, sim.events_queued());
  }
  EXPECT_LE(most, Simulator::kPurgeAt + 1);
  EXPECT_EQ(sim.events_pending(), 1u);
  sim.run();
  EXPECT_EQ(swept, 1);
  EXPECT_EQ(sim.events_run(), 1u);
  EXPECT_EQ(sim.events_queued(), 0u);
}

class SimulatorPurge : public testing::TestWithParam<const char*> {};

TEST_P(SimulatorPurge, CancellingMostEventsKeepsTheOrderOfTheRest) {
  // Events at random times (some at the current instant, which go through
  // the FIFO), most cancelled, some by events as they run: every event not
  // cancelled runs once, in (time, scheduling order), through many purges.
  Simulator sim(1, make_scheduler(GetParam()));
  Rng rng(11);
  struct Ev {
    int64_t when;
    EventHandle h;
    bool cancelled = false;
    int runs = 0;
  };
  std::vector<Ev> evs;
  evs.reserve(60'000);
  std::vector<std::size_t> order;
  std::function<void(std::size_t)> add;
  struct Refs {
    std::vector<Ev>* evs;
    std::vector<std::size_t>* order;
    std::function<void(std::size_t)>* add;
    Simulator* sim;
    Rng* rng;
  } refs{&evs, &order, &add, &sim, &rng};
  add = [&](std::size_t depth) {
    const std::size_t i = evs.size();
    const Time delay = rng.below(8) == 0 ? Time::zero() : Time::ps(static_cast<int64_t>(rng.below(5'000'000)));
    evs.push_back(Ev{(sim.now() + delay).ps(), {}});
    evs[i].h = sim.schedule(delay, [r = &refs, i, depth] {
      auto& all = *r->evs;
      ++all[i].runs;
      r->order->push_back(i);
      if (depth < 2 && all.size() < 59'000) (*r->add)(depth + 1);
      const std::size_t victim = r->rng->below(all.size());
      if (r->sim->cancel(all[victim].h)) all[victim].cancelled = true;
    });
  };
  int purges = 0;
  for (int i = 0; i < 20'000; ++i) {
    add(0);
    for (int k = 0; k < 2; ++k) {
      const std::size_t victim = rng.below(evs.size());
      const std::size_t queued = sim.events_queued();
      if (sim.cancel(evs[victim].h)) evs[victim].cancelled = true;
      purges += sim.events_queued() + 1 < queued;
    }
  }
  EXPECT_GT(purges, 0);
  sim.run();
  std::size_t cancelled = 0;
  for (const Ev& e : evs) {
    cancelled += e.cancelled;
    EXPECT_EQ(e.runs, e.cancelled ? 0 : 1);
  }
  for (std::size_t k = 1; k < order.size(); ++k) {
    const Ev& a = evs[order[k - 1]];
    const Ev& b = evs[order[k]];
    ASSERT_TRUE(a.when < b.when || (a.when == b.when && order[k - 1] < order[k])) << "at run " << k;
  }
  EXPECT_EQ(order.size() + cancelled, evs.size());
  EXPECT_EQ(sim.events_queued(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, SimulatorPurge, testing::Values("heap", "ladder"));

}  // namespace
}  // namespace ibfab::sim
