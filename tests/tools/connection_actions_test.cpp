// The scenario runner's actions on RC connections between hosts
// (tools/scenario/connection_actions.cpp, scenario_connection.cpp):
// connect, post and disconnect, checked through the report's lines.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/tools/report_lines.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_runner.h"

namespace ibfab::scenario {
namespace {

using testing::first_failure;
using testing::line_of;

// A fabric of 8 hosts on 4 leaves (H1 H2 on L1 ... H7 H8 on L4), its SM on
// H1 (none when `sm` is false), then `actions`.
Report run(const std::string& actions, const std::string& duration = "30ms", bool sm = true) {
  const std::string head = "topology: fat-tree:2:4\nduration: " + duration + "\n" +
                           (sm ? "sms:\n  - {node: H1}\n" : "") + "actions:\n";
  return run_scenario(parse_scenario(head + actions, "s.yaml"), {});
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Whether a timeline line starts with `prefix` and ends with `tail`.
::testing::AssertionResult has_line(const Report& r, const std::string& prefix, const std::string& tail) {
  const std::string line = line_of(r, prefix);
  if (ends_with(line, tail)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no line " << prefix << "..." << tail << " (the line: " << line << ")";
}

const char* const kOps[] = {"send", "send-imm", "write", "write-imm", "read"};

// What the timeline says after "N completions success in T" of a post of
// `count` messages of `op` that all arrived.
std::string tail_of(const std::string& op, uint32_t count, uint32_t imm) {
  char first[16], last[16];
  std::snprintf(first, sizeof first, "0x%x", imm);
  std::snprintf(last, sizeof last, "0x%x", imm + count - 1);
  const std::string range = count > 1 ? std::string(first) + ".." + last + " in order" : first;
  const std::string n = std::to_string(count);
  if (op == "send") return ", " + n + " receives (recv), data intact";
  if (op == "send-imm") return ", " + n + " receives (recv, imm " + range + "), data intact";
  if (op == "write-imm") return ", " + n + " receives (recv-rdma-with-imm, imm " + range + "), data intact";
  return ", data intact";
}

TEST(ScenarioConnections, EveryOpArrivesIntactForEachCountAndSize) {
  // Each op in a run of its own: 1, 16 and 300 messages of 0, 64, 4096
  // and 65536 bytes, one post every 2 ms from H2 to H1.
  for (const std::string op : kOps) {
    const bool imm = op == "send-imm" || op == "write-imm";
    std::string actions = "  - {at: 1ms, connect: {node: H2, to: H1}}\n";
    std::vector<std::string> prefixes, tails;
    int at = 2;
    for (const uint32_t count : {1u, 16u, 300u})
      for (const uint32_t size : {0u, 64u, 4096u, 65536u}) {
        actions += "  - {at: " + std::to_string(at) + "ms, post: {node: H2, to: H1, op: " + op +
                   ", count: " + std::to_string(count) + ", size: " + std::to_string(size) +
                   (imm ? ", imm: 0x40" : "") + "}}\n";
        prefixes.push_back(std::to_string(at) + ".000ms H2 post " + std::to_string(count) + " x " +
                           std::to_string(size) + " B " + op + " to H1" + (imm ? " (imm 0x40)" : "") + " -> " +
                           std::to_string(count) + " completions success in ");
        tails.push_back(tail_of(op, count, 0x40));
        at += 2;
      }
    const Report r = run(actions, "30ms");
    EXPECT_TRUE(r.passed()) << op << ": " << first_failure(r);
    for (std::size_t i = 0; i < prefixes.size(); ++i) EXPECT_TRUE(has_line(r, prefixes[i], tails[i])) << op;
  }
}

TEST(ScenarioConnections, BothEndsPostAtOnce) {
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, post: {node: H2, to: H1, op: send, count: 100, size: 2000}}\n"
                       "  - {at: 2ms, post: {node: H1, to: H2, op: send, count: 100, size: 3000}}\n"
                       "  - {at: 2ms, post: {node: H1, to: H2, op: write, count: 70, size: 5000}}\n"
                       "  - {at: 2ms, post: {node: H2, to: H1, op: read, count: 70, size: 7000}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_TRUE(has_line(r, "2.000ms H2 post 100 x 2000 B send to H1 -> 100 completions success",
                       ", 100 receives (recv), data intact"));
  EXPECT_TRUE(has_line(r, "2.000ms H1 post 100 x 3000 B send to H2 -> 100 completions success",
                       ", 100 receives (recv), data intact"));
  EXPECT_TRUE(has_line(r, "2.000ms H1 post 70 x 5000 B write to H2 -> 70 completions success", ", data intact"));
  EXPECT_TRUE(has_line(r, "2.000ms H2 post 70 x 7000 B read to H1 -> 70 completions success", ", data intact"));
}

TEST(ScenarioConnections, OnOneLeafAcrossTheSpinesAndToTheSmsHost) {
  // H2-H1 (the SM's host) share a leaf; H3-H8 and H1-H8 cross the spines.
  // H1 holds two connections at once.
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 1ms, connect: {node: H3, to: H8}}\n"
                       "  - {at: 1ms, connect: {node: H8, to: H1}}\n"
                       "  - {at: 2ms, post: {node: H2, to: H1, op: write-imm, imm: 1, count: 16, size: 9000}}\n"
                       "  - {at: 2ms, post: {node: H3, to: H8, op: send-imm, imm: 2, count: 16, size: 9000}}\n"
                       "  - {at: 2ms, post: {node: H1, to: H8, op: read, count: 16, size: 9000}}\n"
                       "  - {at: 2ms, post: {node: H8, to: H1, op: send, count: 16, size: 9000}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  for (const char* connect : {"1.000ms H2 connect to H1 -> qpn ", "1.000ms H3 connect to H8 -> qpn ",
                              "1.000ms H8 connect to H1 -> qpn "})
    EXPECT_TRUE(has_line(r, connect, ", path MTU 4096"));
  EXPECT_TRUE(has_line(r, "2.000ms H2 post 16 x 9000 B write-imm to H1 (imm 0x1) -> 16 completions success",
                       ", 16 receives (recv-rdma-with-imm, imm 0x1..0x10 in order), data intact"));
  EXPECT_TRUE(has_line(r, "2.000ms H3 post 16 x 9000 B send-imm to H8 (imm 0x2) -> 16 completions success",
                       ", 16 receives (recv, imm 0x2..0x11 in order), data intact"));
  EXPECT_TRUE(has_line(r, "2.000ms H1 post 16 x 9000 B read to H8 -> 16 completions success", ", data intact"));
  EXPECT_TRUE(has_line(r, "2.000ms H8 post 16 x 9000 B send to H1 -> 16 completions success",
                       ", 16 receives (recv), data intact"));
}

TEST(ScenarioConnections, APostAfterTheDisconnectIsFlushedNotFailed) {
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, disconnect: {node: H1, to: H2}}\n"
                       "  - {at: 3ms, post: {node: H2, to: H1, op: send, count: 100, size: 64}}\n"
                       "  - {at: 3ms, post: {node: H1, to: H2, op: read, count: 4, size: 64}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_EQ(line_of(r, "2.000ms H1 disconnect"), "2.000ms H1 disconnect from H2 -> both QPs in err");
  EXPECT_EQ(line_of(r, "3.000ms H2 post"),
            "3.000ms H2 post 100 x 64 B send to H1 -> flushed (the connection is closed)");
  EXPECT_EQ(line_of(r, "3.000ms H1 post"), "3.000ms H1 post 4 x 64 B read to H2 -> flushed (the connection is closed)");
}

TEST(ScenarioConnections, APostCutByTheDisconnectIsPartlyFlushed) {
  // 300 sends of 64 KiB take about 1.6 ms; the disconnect comes after 0.5.
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, post: {node: H2, to: H1, op: send, count: 300, size: 65536}}\n"
                       "  - {at: 2500us, disconnect: {node: H2, to: H1}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  const std::string line = line_of(r, "2.000ms H2 post 300 x 65536 B send to H1 -> ");
  EXPECT_NE(line.find(" flushed (the connection is closed), "), std::string::npos) << line;
  EXPECT_EQ(line.find("-> 0 completions"), std::string::npos) << line;
  EXPECT_TRUE(ends_with(line, "data intact")) << line;
}

TEST(ScenarioConnections, AConnectToAHostThatDoesNotListenIsRejectedAndLeavesThePairAsItWas) {
  const Report r = run("  - {at: 1ms, connect: {node: H3, to: H1, listen: false}}\n"
                       "  - {at: 2ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 3ms, disconnect: {node: H2, to: H1}}\n"
                       "  - {at: 4ms, connect: {node: H1, to: H2, listen: false}}\n"
                       "  - {at: 5ms, post: {node: H2, to: H1, op: send, count: 2, size: 64}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  EXPECT_EQ(line_of(r, "1.000ms H3 connect"), "1.000ms H3 connect to H1 -> rejected (nobody listens: invalid service ID)");
  EXPECT_EQ(line_of(r, "4.000ms H1 connect"), "4.000ms H1 connect to H2 -> rejected (nobody listens: invalid service ID)");
  // The pair still has its closed connection: the post is flushed on it.
  EXPECT_EQ(line_of(r, "5.000ms H2 post"), "5.000ms H2 post 2 x 64 B send to H1 -> flushed (the connection is closed)");
  // A refused connect makes no connection to post on.
  EXPECT_THROW(run("  - {at: 1ms, connect: {node: H3, to: H1, listen: false}}\n"
                   "  - {at: 2ms, post: {node: H3, to: H1}}\n"),
               ScenarioError);
}

TEST(ScenarioConnections, AReconnectMakesNewQpsEitherDirection) {
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, disconnect: {node: H2, to: H1}}\n"
                       "  - {at: 3ms, connect: {node: H1, to: H2}}\n"
                       "  - {at: 4ms, post: {node: H1, to: H2, op: write-imm, imm: 0xffffffff, count: 2, size: 0}}\n"
                       "  - {at: 4ms, post: {node: H2, to: H1, op: send, count: 3, size: 100}}\n");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  const std::string first = line_of(r, "1.000ms H2 connect to H1 -> ");
  const std::string second = line_of(r, "3.000ms H1 connect to H2 -> ");
  ASSERT_NE(first, "(none)");
  ASSERT_NE(second, "(none)");
  // "qpn 0x... to 0x...": the new QPs are not the old ones.
  EXPECT_NE(first.substr(first.find("qpn")), second.substr(second.find("qpn")));
  EXPECT_TRUE(has_line(r, "4.000ms H1 post 2 x 0 B write-imm to H2 (imm 0xffffffff) -> 2 completions",
                       ", 2 receives (recv-rdma-with-imm, imm 0xffffffff..0x0 in order), data intact"));
  EXPECT_TRUE(has_line(r, "4.000ms H2 post 3 x 100 B send to H1 -> 3 completions", ", 3 receives (recv), data intact"));
}

TEST(ScenarioConnections, ARepeatedPostGoesToThePairsConnectionAtTheTime) {
  // Every 1 ms from 2 to 6: on the first connection, flushed once it is
  // closed, then on the second (made the other way).
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, every: 1ms, until: 6ms, post: {node: H2, to: H1, op: send-imm, imm: 5, count: 3,"
                       " size: 1048576}}\n"
                       "  - {at: 3500us, disconnect: {node: H2, to: H1}}\n"
                       "  - {at: 4500us, connect: {node: H1, to: H2}}\n",
                       "10ms");
  EXPECT_TRUE(r.passed()) << first_failure(r);
  const std::string intact = ", 3 receives (recv, imm 0x5..0x7 in order), data intact";
  for (const std::string at : {"2.000ms", "3.000ms", "5.000ms", "6.000ms"})
    EXPECT_TRUE(has_line(r, at + " H2 post 3 x 1048576 B send-imm to H1 (imm 0x5) -> 3 completions", intact));
  EXPECT_EQ(line_of(r, "4.000ms H2 post"),
            "4.000ms H2 post 3 x 1048576 B send-imm to H1 (imm 0x5) -> flushed (the connection is closed)");
}

TEST(ScenarioConnections, AHostWithNoLidFailsTheConnectWithAClearLine) {
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, post: {node: H2, to: H1, op: send, count: 1, size: 8}}\n"
                       "  - {at: 3ms, disconnect: {node: H2, to: H1}}\n",
                       "5ms", false);
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.failures.size(), 3u);
  EXPECT_EQ(r.failures[0], "1.000ms H2 connect to H1: H2's port 1 is Init with no LID: no SM has brought it up");
  EXPECT_EQ(r.failures[1], "2.000ms H2 post 1 x 8 B send to H1: no connection (its connect failed)");
  EXPECT_EQ(r.failures[2], "3.000ms H2 disconnect from H1: no connection (its connect failed)");
}

// H2 connects to H1 at 1 ms, posts `post` at 2 ms, and its cable goes down
// at `down`, for good: the run's one failure.
std::string cable_down_under(const std::string& post, const std::string& down, const std::string& duration) {
  const Report r = run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
                       "  - {at: 2ms, post: {node: H2, to: H1, " + post + "}}\n"
                       "  - {at: " + down + ", link-down: \"H2[1]\"}\n",
                       duration);
  return r.failures.size() == 1 ? r.failures[0] : std::to_string(r.failures.size()) + " failures: " + first_failure(r);
}

TEST(ScenarioConnections, CompletionsThatNeverComeFailTheRunNamingThePost) {
  // Nothing more is acknowledged, and the retries (each after the 2.1 s
  // ACK timeout) outlast the run.
  const std::string f = cable_down_under("op: send, count: 16, size: 65536", "2010us", "10ms");
  EXPECT_EQ(f.rfind("2.000ms H2 post 16 x 65536 B send to H1: ", 0), 0u) << f;
  EXPECT_TRUE(ends_with(f, " came by the end of the run")) << f;
  EXPECT_EQ(f.find("16 of 16"), std::string::npos) << f;
}

TEST(ScenarioConnections, AnErrorCompletionFailsThePostWithItsStatus) {
  // After 7 retries of 2.1 s the first write ends in RETRY_EXC_ERR (12)
  // and the QP in ERR; that is no closed connection.
  EXPECT_EQ(cable_down_under("op: write, count: 4, size: 65536", "2001us", "20s"),
            "2.000ms H2 post 4 x 65536 B write to H1: message 0: completion status 12 (IBV_WC_RETRY_EXC_ERR)");
}

TEST(ScenarioConnections, TheFingerprintCoversWhatTheHostsObserve) {
  // Posts on a closed connection put nothing on the wire: only the
  // flushed completions the host sees tell these runs apart.
  const auto with = [](int count) {
    return run("  - {at: 1ms, connect: {node: H2, to: H1}}\n"
               "  - {at: 2ms, disconnect: {node: H2, to: H1}}\n"
               "  - {at: 3ms, post: {node: H2, to: H1, op: send, count: " + std::to_string(count) + ", size: 64}}\n",
               "5ms")
        .fingerprint;
  };
  EXPECT_EQ(with(4), with(4));
  EXPECT_NE(with(4), with(5));
}

}  // namespace
}  // namespace ibfab::scenario
