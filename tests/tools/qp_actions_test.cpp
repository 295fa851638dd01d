// The scenario runner's actions on a host's UD QP (tools/scenario/qp_actions.cpp):
// attach, detach, qp-state, create-qp and unicast sends, checked through
// what the hosts received and what the report says.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/tools/report_lines.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_runner.h"

namespace ibfab::scenario {
namespace {

// A fabric of 8 hosts on 4 leaves (H1 H2 on L1 ... H7 H8 on L4), its SM on
// H1, then `actions`.
Report run(const std::string& actions) {
  return run_scenario(
      parse_scenario("topology: fat-tree:2:4\nduration: 30ms\nsms:\n  - {node: H1}\nactions:\n" + actions, "s.yaml"),
      {});
}

using testing::first_failure;
using testing::line_of;

const std::string kGroup = "\"ff12:4001::21\"";
// H3 and H2 join the group as full members at 1 ms.
const std::string kBothJoin = "  - {at: 1ms, join: {node: H3, mgid: " + kGroup + "}}\n"
                              "  - {at: 1ms, join: {node: H2, mgid: " + kGroup + "}}\n";

TEST(ScenarioQpActions, AnAttachedQpReceivesTheGroupsTraffic) {
  // H2 joins, detaches, and its QP is made again (attached to nothing, as
  // rdma_cm leaves a new QP): it receives nothing until attached with the
  // MLID its join returned.
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, detach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 2ms, create-qp: {node: H2}}\n"
                       "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 3}}\n"
                       "  - {at: 4ms, expect: {node: H2, received: 0}}\n"
                       "  - {at: 5ms, attach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 6ms, send: {node: H3, mgid: " + kGroup + ", count: 5}}\n"
                       "  - {at: 7ms, expect: {node: H2, received: 5}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_EQ(line_of(r, "5.000ms H2 attach"), "5.000ms H2 attach ff12:4001::21 mlid 0xc001 -> 0");
}

TEST(ScenarioQpActions, AttachingTwiceIsNoErrorAndGivesOneCopy) {
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, attach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 2ms, attach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                       "  - {at: 4ms, expect: {node: H2, received: 4}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_EQ(std::count(r.timeline.begin(), r.timeline.end(), "2.000ms H2 attach ff12:4001::21 mlid 0xc001 -> 0"), 2);
}

TEST(ScenarioQpActions, AnAttachBeforeTheJoinTakesTheGroupOnceItsPortIsRouted) {
  // An attach before any join has MLID 0. Until H2 joins, the SM routes
  // nothing of the group to H2's port; once it has, the HCA (matching by
  // MGID, as mlx4 and mlx5 do) delivers one copy although the QP is
  // attached twice, with MLID 0 and with the join's.
  const Report r = run("  - {at: 1ms, join: {node: H3, mgid: " + kGroup + "}}\n"
                       "  - {at: 1ms, attach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 2ms, send: {node: H3, mgid: " + kGroup + ", count: 2}}\n"
                       "  - {at: 3ms, expect: {node: H2, received: 0}}\n"
                       "  - {at: 3ms, join: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 4ms, send: {node: H3, mgid: " + kGroup + ", count: 3}}\n"
                       "  - {at: 5ms, expect: {node: H2, received: 3}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_EQ(line_of(r, "1.000ms H2 attach"), "1.000ms H2 attach ff12:4001::21 mlid 0x0000 -> 0");
}

TEST(ScenarioQpActions, DetachStopsDeliveryAndASecondDetachIsEinval) {
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                       "  - {at: 3ms, detach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 4ms, detach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 5ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                       "  - {at: 6ms, expect: {node: H2, received: 4}}\n"
                       "  - {at: 6ms, expect: {node: H3, received: 8}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r) << " (an errno is a timeline line, not a failure)";
  EXPECT_EQ(line_of(r, "3.000ms H2 detach"), "3.000ms H2 detach ff12:4001::21 mlid 0xc001 -> 0");
  EXPECT_EQ(line_of(r, "4.000ms H2 detach"), "4.000ms H2 detach ff12:4001::21 mlid 0xc001 -> EINVAL");
}

TEST(ScenarioQpActions, AQpOutOfRtrAndRtsReceivesNothing) {
  for (const char* state : {"err", "reset"}) {
    SCOPED_TRACE(state);
    const Report r = run(kBothJoin +
                         "  - {at: 2ms, qp-state: {node: H2, state: " + state + "}}\n"
                         "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                         "  - {at: 3ms, send: {node: H1, to: H2, count: 2}}\n"
                         "  - {at: 4ms, expect: {node: H2, received: 0}}\n"
                         "  - {at: 4ms, expect: {node: H3, received: 4}}\n");
    EXPECT_TRUE(r.passed()) << first_failure(r);
    EXPECT_EQ(line_of(r, "2.000ms H2 qp-state"), std::string("2.000ms H2 qp-state ") + state + " -> 0");
  }
}

TEST(ScenarioQpActions, ASendFromAQpNotInRtsFailsAndInErrIsFlushed) {
  for (const char* state : {"reset", "init", "rtr"}) {
    SCOPED_TRACE(state);
    std::string path = "  - {at: 2ms, qp-state: {node: H3, state: reset}}\n";
    if (std::string(state) != "reset") path += "  - {at: 2ms, qp-state: {node: H3, state: init}}\n";
    if (std::string(state) == "rtr") path += "  - {at: 2ms, qp-state: {node: H3, state: rtr}}\n";
    const Report r = run("  - {at: 1ms, join: {node: H3, mgid: " + kGroup + "}}\n" + path +
                         "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0], std::string("3.000ms H3 send 4 x 64 B to ff12:4001::21: the QP is in ") + state +
                                 ", not rts (ibv_post_send: EINVAL)");
  }
  // ERR takes the post and flushes it (api/verbs/verbs_post.cpp): nothing
  // leaves, and the run does not fail.
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, qp-state: {node: H3, state: err}}\n"
                       "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                       "  - {at: 4ms, expect: {node: H2, received: 0}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_EQ(line_of(r, "3.000ms H3 send"), "3.000ms H3 send 4 x 64 B to ff12:4001::21 -> flushed (the QP is in err)");
}

TEST(ScenarioQpActions, MovingToErrFlushesTheSendsNotYetGone) {
  // 10 messages 1 us apart from 2 ms; ERR at 2.0045 ms: 5 left (at 0..4
  // us), 5 flushed. (A post is not undone: moving back to RTS does not send
  // them.)
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, send: {node: H3, mgid: " + kGroup + ", count: 10}}\n"
                       "  - {at: 2004.5us, qp-state: {node: H3, state: err}}\n"
                       "  - {at: 3ms, expect: {node: H2, received: 5}}\n"
                       "  - {at: 3ms, expect: {node: H3, received: 5}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
}

TEST(ScenarioQpActions, BackToRtsThroughInitAndRtrReceivesAgain) {
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, qp-state: {node: H2, state: err}}\n"
                       "  - {at: 2ms, qp-state: {node: H2, state: rts}}\n"  // ERR -> RTS: no such transition
                       "  - {at: 2ms, qp-state: {node: H2, state: reset}}\n"
                       "  - {at: 2ms, qp-state: {node: H2, state: rtr}}\n"  // RESET -> RTR: neither
                       "  - {at: 2ms, qp-state: {node: H2, state: init}}\n"
                       "  - {at: 2ms, qp-state: {node: H2, state: init}}\n"
                       "  - {at: 2ms, qp-state: {node: H2, state: rtr}}\n"
                       "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 3}}\n"
                       "  - {at: 4ms, expect: {node: H2, received: 3}}\n"  // RTR receives
                       "  - {at: 5ms, qp-state: {node: H2, state: rts}}\n"
                       "  - {at: 5ms, qp-state: {node: H2, state: rts}}\n"
                       "  - {at: 6ms, send: {node: H3, mgid: " + kGroup + ", count: 2}}\n"
                       "  - {at: 6ms, send: {node: H2, mgid: " + kGroup + ", count: 2}}\n"
                       "  - {at: 7ms, expect: {node: H2, received: 7}}\n"  // its own 2 looped back
                       "  - {at: 7ms, expect: {node: H3, received: 7}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  std::vector<std::string> states;
  for (const std::string& l : r.timeline)
    if (l.find(" qp-state ") != std::string::npos) states.push_back(l.substr(l.find("qp-state")));
  EXPECT_EQ(states, (std::vector<std::string>{"qp-state err -> 0", "qp-state rts -> EINVAL (the QP is in err)",
                                              "qp-state reset -> 0", "qp-state rtr -> EINVAL (the QP is in reset)",
                                              "qp-state init -> 0", "qp-state init -> 0", "qp-state rtr -> 0",
                                              "qp-state rts -> 0", "qp-state rts -> 0"}));
}

TEST(ScenarioQpActions, AFullMemberReceivesItsOwnMulticastUnlessCreatedToBlockIt) {
  for (const bool block : {false, true}) {
    SCOPED_TRACE(block);
    const std::string flag = block ? "true" : "false";
    const Report r = run(kBothJoin +
                         "  - {at: 2ms, detach: {node: H3, mgid: " + kGroup + "}}\n"
                         "  - {at: 2ms, create-qp: {node: H3, block-self-mcast-lb: " + flag + "}}\n"
                         "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                         "  - {at: 4ms, expect: {node: H3, received: 0}}\n"  // the new QP is attached to nothing
                         "  - {at: 4ms, expect: {node: H2, received: 4}}\n"
                         "  - {at: 5ms, attach: {node: H3, mgid: " + kGroup + "}}\n"
                         "  - {at: 6ms, send: {node: H3, mgid: " + kGroup + ", count: 4}}\n"
                         "  - {at: 6ms, send: {node: H2, mgid: " + kGroup + ", count: 3}}\n"
                         "  - {at: 7ms, expect: {node: H3, received: " + std::to_string(3 + (block ? 0 : 4)) + "}}\n"
                         "  - {at: 7ms, expect: {node: H2, received: 11}}\n");
    EXPECT_TRUE(r.passed()) << first_failure(r);
    EXPECT_NE(line_of(r, std::string("2.000ms H3 create-qp") + (block ? " block-self-mcast-lb" : "") + " -> qpn 0x"),
              "(none)");
  }
}

TEST(ScenarioQpActions, AQpStillAttachedIsNotDestroyedAndKeepsReceiving) {
  // As uverbs refuses to destroy an attached QP (EBUSY, which
  // rdma_destroy_qp ignores): H2's old QP lives on, attached, beside the
  // new one, and the host gets each message on both once the new one is
  // attached too.
  const Report r = run(kBothJoin +
                       "  - {at: 2ms, create-qp: {node: H2}}\n"
                       "  - {at: 3ms, send: {node: H3, mgid: " + kGroup + ", count: 3}}\n"
                       "  - {at: 4ms, expect: {node: H2, received: 3}}\n"
                       "  - {at: 5ms, attach: {node: H2, mgid: " + kGroup + "}}\n"
                       "  - {at: 6ms, send: {node: H3, mgid: " + kGroup + ", count: 5}}\n"
                       "  - {at: 7ms, expect: {node: H2, received: 13}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
}

TEST(ScenarioQpActions, ARecreatedQpKeepsItsQkeyForUnicast) {
  // H2's QP takes the Q_Key of the group it joined (0x22); a unicast send
  // to H2 carries the Q_Key H2's QP has, before and after create-qp.
  const Report r = run("  - {at: 1ms, join: {node: H2, mgid: " + kGroup + ", qkey: 0x22}}\n"
                       "  - {at: 2ms, send: {node: H5, to: H2, count: 2}}\n"
                       "  - {at: 3ms, create-qp: {node: H2}}\n"
                       "  - {at: 4ms, send: {node: H5, to: H2, count: 3}}\n"
                       "  - {at: 5ms, expect: {node: H2, received: 5}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
}

TEST(ScenarioQpActions, UnicastWithAndWithoutGrhArrivesAndCounts) {
  std::string fingerprint[2];
  for (const uint32_t count : {1u, 16u, 300u}) {
    for (const bool grh : {false, true}) {
      SCOPED_TRACE(std::to_string(count) + (grh ? " with GRH" : " without"));
      const std::string n = std::to_string(count);
      // H1 to H2 on its own leaf, H8 on another; H8 to H1 back.
      const Report r = run(std::string("  - {at: 1ms, send: {node: H1, to: H8, size: 256, count: ") + n +
                           ", grh: " + (grh ? "true" : "false") + "}}\n"
                           "  - {at: 1ms, send: {node: H1, to: H2, count: " + n + "}}\n"
                           "  - {at: 1ms, send: {node: H8, to: H1, count: " + n + "}}\n"
                           "  - {at: 2ms, expect: {node: H8, received: " + n + "}}\n"
                           "  - {at: 2ms, expect: {node: H2, received: " + n + "}}\n"
                           "  - {at: 2ms, expect: {node: H1, received: " + n + "}}\n");
      EXPECT_TRUE(r.passed()) << first_failure(r);
      EXPECT_EQ(line_of(r, "1.000ms H1 send"),
                "1.000ms H1 send " + n + " x 256 B to H8" + (grh ? " (grh)" : ""));
      if (count == 1) fingerprint[grh] = r.fingerprint;
    }
  }
  EXPECT_NE(fingerprint[0], fingerprint[1]) << "the receiver sees whether a GRH came";
}

TEST(ScenarioQpActions, NamesAreCheckedBeforeTheRunWithTheActionsLine) {
  auto error_of = [](const std::string& action) {
    try {
      run_scenario(parse_scenario("topology: fat-tree:2:4\nactions:\n  - " + action + "\n", "s.yaml"), {});
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_of("{at: 0, send: {node: H1, to: L1}}"), "s.yaml:3: 'L1' is a switch, not a host");
  EXPECT_EQ(error_of("{at: 0, send: {node: H1, to: H9}}"), "s.yaml:3: 'H9' is not in the topology");
  EXPECT_EQ(error_of("{at: 0, attach: {node: S1, mgid: \"ff12::1\"}}"), "s.yaml:3: 'S1' is a switch, not a host");
  EXPECT_EQ(error_of("{at: 0, detach: {node: H0, mgid: \"ff12::1\"}}"), "s.yaml:3: 'H0' is not in the topology");
  EXPECT_EQ(error_of("{at: 0, qp-state: {node: X, state: err}}"), "s.yaml:3: 'X' is not in the topology");
  EXPECT_EQ(error_of("{at: 0, create-qp: {node: L2}}"), "s.yaml:3: 'L2' is a switch, not a host");
}

}  // namespace
}  // namespace ibfab::scenario
