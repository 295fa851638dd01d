// The SM's SMP transport on a real (simulated) fabric: order, window,
// generated batches, timeouts and retries.
#include "sm/smp_sender.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/mad/node_info.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"

namespace ibfab::sm {
namespace {

// H1 - S1 - S2 - H2; the sender sits on H1 port 1.
struct Line {
  sim::Simulator sim;
  topo::Topology topology = topo::load_topology("line:2");
  fabric::Fabric fabric{sim, topology};
  SmpSender sender;
  std::vector<std::string> seen;  // callbacks, in the order they ran

  explicit Line(SmpSender::Options o = {}) : sender(*fabric.find_hca("H1"), 1, o) {}

  fabric::Link& h1_link() { return *fabric.find_hca("H1")->port(1).link(); }
  // NodeInfo of S1 (one hop), recorded as `name` (or name + "!" if unanswered).
  void get(const std::string& name) {
    static const uint8_t kPath[] = {1};
    sender.get(kPath, mad::NodeInfo::kAttributeId, 0, record(name));
  }
  SmpSender::Callback record(const std::string& name) {
    return [this, name](std::span<const uint8_t> smp, uint16_t status) {
      seen.push_back(smp.empty() ? name + "!" : status == 0 ? name : name + "?");
    };
  }
};

TEST(SmpSender, AnswersComeBackInQueueOrderWithinTheWindow) {
  SmpSender::Options o;
  o.window = 4;
  Line l(o);
  uint64_t answered = 0;
  bool window_kept = true;
  static const uint8_t kPath[] = {1};
  for (int i = 0; i < 20; ++i) {
    l.sender.get(kPath, mad::NodeInfo::kAttributeId, 0, [&, i](std::span<const uint8_t> smp, uint16_t) {
      window_kept = window_kept && l.sender.sent() - answered <= 4;
      ++answered;
      l.seen.push_back(std::to_string(i) + (smp.empty() ? "!" : ""));
    });
  }
  EXPECT_EQ(l.sender.sent(), 4u);  // the rest wait for room
  l.sim.run();
  ASSERT_EQ(l.seen.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(l.seen[static_cast<std::size_t>(i)], std::to_string(i));
  EXPECT_TRUE(window_kept);
  EXPECT_EQ(l.sender.retries(), 0u);
  EXPECT_TRUE(l.sender.idle());
}

TEST(SmpSender, AGeneratedBatchKeepsItsPlaceInTheQueue) {
  SmpSender::Options o;
  o.window = 1;
  Line l(o);
  l.get("a");
  std::vector<std::size_t> made;
  l.sender.generate(3, [&](std::size_t i, SmpSender::Request& r) {
    made.push_back(i);
    r.method = mad::dr_smp::kMethodGet;
    r.attr = mad::NodeInfo::kAttributeId;
    r.path = DrRoute(std::vector<uint8_t>{1});
    r.cb = l.record("b" + std::to_string(i));
  });
  l.get("c");
  EXPECT_TRUE(made.empty());  // nothing is made before its turn
  bool idle_seen = false;
  l.sender.when_idle([&] { idle_seen = true; });
  l.sim.run();
  EXPECT_EQ(made, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(l.seen, (std::vector<std::string>{"a", "b0", "b1", "b2", "c"}));
  EXPECT_TRUE(idle_seen);
  EXPECT_EQ(l.sender.sent(), 5u);
}

TEST(SmpSender, AnUnansweredRequestIsRetriedThenGivenUp) {
  Line l;
  l.h1_link().set_loss(1.0);
  sim::Time given_up;
  static const uint8_t kPath[] = {1};
  l.sender.get(kPath, mad::NodeInfo::kAttributeId, 0, [&](std::span<const uint8_t> smp, uint16_t) {
    EXPECT_TRUE(smp.empty());
    given_up = l.sim.now();
  });
  l.sim.run();
  // Sent at 0, 200, 400 and 600 ms; given up 200 ms after the last try.
  EXPECT_EQ(given_up, sim::Time::ms(800));
  EXPECT_EQ(l.sender.sent(), 4u);
  EXPECT_EQ(l.sender.retries(), 3u);
  EXPECT_EQ(l.sender.unanswered(), 1u);
  EXPECT_TRUE(l.sender.idle());
}

TEST(SmpSender, ALostRequestIsResentWhileOthersGoOn) {
  Line l;
  l.h1_link().set_loss(1.0);
  l.get("lost-once");
  l.sim.run_until(sim::Time::ms(1));
  l.h1_link().set_loss(0.0);
  l.get("b");
  l.get("c");
  l.sim.run_until(sim::Time::ms(100));
  EXPECT_EQ(l.seen, (std::vector<std::string>{"b", "c"}));
  l.sim.run();
  EXPECT_EQ(l.seen, (std::vector<std::string>{"b", "c", "lost-once"}));
  EXPECT_EQ(l.sender.retries(), 1u);
  EXPECT_EQ(l.sender.unanswered(), 0u);
}

TEST(SmpSender, AnsweredRequestsLeaveNoEventsBehind) {
  Line l;
  for (int i = 0; i < 100; ++i) l.get("x");
  l.sim.run_until(sim::Time::ms(1));
  EXPECT_EQ(l.seen.size(), 100u);
  EXPECT_EQ(l.sim.events_pending(), 0u);
}

}  // namespace
}  // namespace ibfab::sm
