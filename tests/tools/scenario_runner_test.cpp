#include "tools/scenario/scenario_runner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tools/scenario/scenario_loader.h"

namespace ibfab::scenario {
namespace {

Scenario lossy(uint64_t seed) {
  return parse_scenario(
      "topology: fat-tree:2:4\n"
      "seed: " + std::to_string(seed) + "\n"
      "duration: 2s\n"
      "actions:\n"
      "  - {at: 0, link-loss: \"L1[3]\", probability: 0.4}\n"
      "  - {at: 0, link-loss: \"L1[4]\", probability: 0.4}\n"
      "  - {at: 1us, probe: H1}\n",
      "lossy.yaml");
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

TEST(ScenarioRunner, SameScenarioAndSeedGiveAByteIdenticalTrace) {
  RunOptions a, b;
  a.trace = ::testing::TempDir() + "/trace_a.txt";
  b.trace = ::testing::TempDir() + "/trace_b.txt";
  const Report ra = run_scenario(lossy(3), a);
  const Report rb = run_scenario(lossy(3), b);
  const std::string ta = slurp(a.trace), tb = slurp(b.trace);
  EXPECT_GT(ta.size(), 10'000u);
  EXPECT_EQ(ta, tb);
  EXPECT_EQ(ra.fingerprint, rb.fingerprint);
  EXPECT_GT(ra.probes[0].retries, 0u) << "the loss must have mattered for this test to mean anything";
}

TEST(ScenarioRunner, EverySchedulerGivesTheSameRunByteForByte) {
  const Report base = run_scenario(lossy(3), {});
  for (const char* name : {"heap4", "heap8", "ladder"}) {
    RunOptions o;
    o.scheduler = name;
    const Report r = run_scenario(lossy(3), o);
    EXPECT_EQ(r.fingerprint, base.fingerprint) << name;
    EXPECT_EQ(r.events, base.events) << name;
  }
}

TEST(ScenarioRunner, ADifferentSeedChangesALossyRun) {
  const Report r3 = run_scenario(lossy(3), {});
  const Report r4 = run_scenario(lossy(4), {});
  EXPECT_NE(r3.fingerprint, r4.fingerprint);
  EXPECT_TRUE(r3.passed());
  EXPECT_TRUE(r4.passed());
}

TEST(ScenarioRunner, ProbesFindWhatTheFaultsLeft) {
  const Scenario s = parse_scenario(
      "topology: fat-tree:2:4\n"
      "duration: 10ms\n"
      "actions:\n"
      "  - {at: 0, node-down: S1}\n"
      "  - {at: 0, link-down: \"L4[1]\"}\n"
      "  - {at: 1us, probe: H1}\n",
      "s.yaml");
  const Report r = run_scenario(s, {});
  ASSERT_EQ(r.probes.size(), 1u);
  const ProbeReport& p = r.probes[0];
  EXPECT_TRUE(p.complete());
  EXPECT_EQ(p.switches, 5u) << "S1 is down";
  EXPECT_EQ(p.nodes, 5u + 7u) << "H7 lost its only cable";
  EXPECT_EQ(p.links, 16u - 4u - 1u);
}

TEST(ScenarioRunner, ActionsNamingUnknownThingsFailBeforeTheRunWithTheirLine) {
  auto error_of = [](const std::string& text) {
    try {
      run_scenario(parse_scenario(text, "s.yaml"), {});
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_of("topology: ring:3\nactions:\n  - {at: 0, node-down: Z9}\n"),
            "s.yaml:3: no node 'Z9' in the topology");
  EXPECT_EQ(error_of("topology: ring:3\nactions:\n  - {at: 0, link-down: \"S1[99]\"}\n"),
            "s.yaml:3: S1 has ports 1..36, not 99");
  EXPECT_EQ(error_of("topology: ring:3\nactions:\n  - {at: 0, link-down: \"S1[30]\"}\n"),
            "s.yaml:3: no cable on S1[30]");
  EXPECT_EQ(error_of("topology: ring:3\nactions:\n  - {at: 0, probe: S1}\n"),
            "s.yaml:3: 'probe' needs a host (an HCA); 'S1' is a switch");
}

TEST(ScenarioRunner, TheSmBringsTheSubnetUpAndTheFabricChecksOut) {
  const Report r = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 5ms\nsms:\n  - {node: H3, routing: updn}\n", "s.yaml"), {});
  ASSERT_EQ(r.sms.size(), 1u);
  const SmReport& sm = r.sms[0];
  EXPECT_TRUE(sm.up) << sm.error;
  EXPECT_EQ(sm.nodes, 14u);
  EXPECT_EQ(sm.routes_checked, 4u * 14u) << "from the 4 leaves (the switches with hosts) to all 14 LIDs";
  EXPECT_EQ(sm.routes_broken, 0u);
  EXPECT_EQ(sm.ports_not_active, 0u);
  EXPECT_TRUE(r.passed());
}

TEST(ScenarioRunner, AnSmThatCannotFinishFailsTheRun) {
  const Report r = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 3us\nsms:\n  - {node: H1}\n", "s.yaml"), {});
  ASSERT_EQ(r.sms.size(), 1u);
  EXPECT_FALSE(r.sms[0].up);
  EXPECT_FALSE(r.passed());
}

TEST(ScenarioRunner, MulticastJoinsTrafficAndLeavesThroughTheSa) {
  const Report r = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 10ms\nsms:\n  - {node: H1}\nactions:\n"
                     "  - {at: 1ms, join: {node: H3, mgid: \"ff12:4001::7\", join-state: full}}\n"
                     "  - {at: 1ms, join: {node: H6, mgid: \"ff12:4001::7\", join-state: non-member}}\n"
                     "  - {at: 1ms, join: {node: H4, mgid: \"ff12:4001::8\", join-state: non-member, expect-status: 0x0200}}\n"
                     "  - {at: 1ms, join: {node: H8, mgid: \"ff12:4001::7\", join-state: send-only-non-member}}\n"
                     "  - {at: 2ms, send: {node: H8, mgid: \"ff12:4001::7\", count: 4, size: 64}}\n"
                     "  - {at: 3ms, expect: {node: H3, received: 4}}\n"
                     "  - {at: 3ms, expect: {node: H6, received: 4}}\n"
                     "  - {at: 3ms, expect: {node: H8, received: 0}}\n"
                     "  - {at: 4ms, leave: {node: H3, mgid: \"ff12:4001::7\", join-state: full}}\n"
                     "  - {at: 5ms, expect: {group: \"ff12:4001::7\", exists: false}}\n",
                     "s.yaml"),
      {});
  EXPECT_TRUE(r.failures.empty()) << r.failures.front();
  EXPECT_EQ(r.checks, 10u) << "4 joins, 1 send, 3 receive checks, 1 leave, 1 group check";
  EXPECT_TRUE(r.passed());
  // A NonMember cannot create a group (rulebook 3.1 rule 7): 0x0200, expected.
  bool rejected = false;
  for (const std::string& line : r.timeline) rejected = rejected || line.find("H4 join ff12:4001::8") != std::string::npos;
  EXPECT_TRUE(rejected);
}

// A host's SA requests go to its port's MasterSMLID: with no SM at all the
// request fails at once; with the SM's host gone, after 11 tries of 300 ms.
TEST(ScenarioRunner, AJoinWithNoSmToAnswerFailsAndSaysWhy) {
  const Report none = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 5ms\nactions:\n"
                     "  - {at: 1ms, join: {node: H3, mgid: \"ff12:4001::7\"}}\n",
                     "s.yaml"),
      {});
  ASSERT_EQ(none.failures.size(), 1u);
  EXPECT_EQ(none.failures[0], "1.000ms H3 join ff12:4001::7 (full) -> no SM to ask (expected status 0x0000)");
  const Report gone = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 4s\nsms:\n  - {node: H1}\nactions:\n"
                     "  - {at: 2ms, node-down: H1}\n"
                     "  - {at: 3ms, join: {node: H3, mgid: \"ff12:4001::7\"}}\n",
                     "s.yaml"),
      {});
  ASSERT_EQ(gone.failures.size(), 1u);
  EXPECT_EQ(gone.failures[0], "3.000ms H3 join ff12:4001::7 (full) -> no answer (expected status 0x0000)");
  EXPECT_TRUE(gone.join_latency.empty());
}

TEST(ScenarioRunner, UnmetExpectationsFailTheRunAndSayWhy) {
  const Report r = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 10ms\nsms:\n  - {node: H1}\nactions:\n"
                     "  - {at: 1ms, join: {node: H3, mgid: \"ff12:4001::7\"}}\n"
                     "  - {at: 2ms, expect: {group: \"ff12:4001::7\", members: 2}}\n"
                     "  - {at: 2ms, send: {node: H5, mgid: \"ff12:4001::7\"}}\n",
                     "s.yaml"),
      {});
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0], "2.000ms expect group ff12:4001::7 with 2 members: it has 1 members");
  EXPECT_EQ(r.failures[1], "2.000ms H5 send 1 x 64 B to ff12:4001::7: the host has not joined the group");
  EXPECT_FALSE(r.passed());
}

TEST(ScenarioRunner, AProbeCutShortByTheEndOfTheRunFails) {
  const Report r = run_scenario(parse_scenario("topology: ring:3\nduration: 1us\nactions:\n  - {at: 0, probe: H1}\n",
                                               "s.yaml"),
                                {});
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_FALSE(r.probes[0].finished);
  EXPECT_FALSE(r.passed());
}

}  // namespace
}  // namespace ibfab::scenario

namespace ibfab::scenario {
namespace {

TEST(ScenarioRunner, ARepeatedActionIsAppliedAtEachOfItsTimes) {
  const Report r = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 20ms\nsms:\n  - {node: H1}\nactions:\n"
                     "  - {at: 1ms, every: 2ms, until: 7ms, join: {node: H3, mgid: \"ff12:4001::7\"}}\n",
                     "s.yaml"),
      {});
  EXPECT_TRUE(r.failures.empty()) << r.failures.front();
  EXPECT_EQ(r.join_latency.count(), 4u);  // at 1, 3, 5 and 7 ms
  ASSERT_EQ(r.timeline.size(), 4u);
  EXPECT_EQ(r.timeline[0].substr(0, 8), "1.000ms ");
  EXPECT_EQ(r.timeline[3].substr(0, 8), "7.000ms ");
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_EQ(r.actions[0], "1.000ms H3 join ff12:4001::7 (full) every 2.000ms until 7.000ms");
}

TEST(ScenarioRunner, ARepeatedActionNeedsBothEveryAndUntil) {
  for (const char* bad : {"{at: 1ms, every: 1ms, link-down: \"L1[3]\"}", "{at: 1ms, until: 5ms, link-down: \"L1[3]\"}",
                          "{at: 6ms, every: 1ms, until: 5ms, link-down: \"L1[3]\"}"}) {
    try {
      parse_scenario(std::string("topology: fat-tree:2:4\nduration: 20ms\nactions:\n  - ") + bad + "\n", "s.yaml");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ScenarioError& e) {
      EXPECT_EQ(std::string(e.what()),
                "s.yaml:4: a repeated action has both 'every' (above 0) and 'until' (not before 'at')");
    }
  }
}

// A join whose tries have not run out when the run ends is no pass.
TEST(ScenarioRunner, AJoinStillWaitingWhenTheRunEndsFailsIt) {
  const Report r = run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 1s\nsms:\n  - {node: H1}\nactions:\n"
                     "  - {at: 2ms, node-down: H1}\n"
                     "  - {at: 3ms, join: {node: H3, mgid: \"ff12:4001::7\"}}\n",
                     "s.yaml"),
      {});
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].substr(0, 64), "1 SA request(s) still waiting for an answer or their timeout whe");
}

}  // namespace
}  // namespace ibfab::scenario
