// The link faults `ibfab serve --fault` takes (tools/cli/faults.h): the
// option's text, good and bad, and a scenario's link actions.
#include "tools/cli/faults.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tools/scenario/scenario_loader.h"

namespace ibfab::cli {
namespace {

using Kind = api::Fault::Kind;

std::string error_of(const std::string& text) {
  try {
    parse_fault(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::string scenario_error_of(const std::string& actions) {
  try {
    faults_from_scenario(scenario::parse_scenario("topology: fat-tree:2:4\nduration: 1s\nactions:\n" + actions, "s.yaml"));
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Faults, ParsesEachAction) {
  api::Fault f = parse_fault("2s link-down L5[5]");
  EXPECT_EQ(f.at, sim::Time::s(2));
  EXPECT_EQ(f.kind, Kind::LinkDown);
  EXPECT_EQ(f.link.node, "L5");
  EXPECT_EQ(f.link.port, 5);
  EXPECT_EQ(f.link.far_node, "");
  EXPECT_EQ(f.link.text, "L5[5]");
  EXPECT_EQ(f.origin, "--fault '2s link-down L5[5]'");

  f = parse_fault("3500ms link-up S1[3]-H1[1]");
  EXPECT_EQ(f.at, sim::Time::ms(3500));
  EXPECT_EQ(f.kind, Kind::LinkUp);
  EXPECT_EQ(f.link.node, "S1");
  EXPECT_EQ(f.link.port, 3);
  EXPECT_EQ(f.link.far_node, "H1");
  EXPECT_EQ(f.link.far_port, 1);

  f = parse_fault("  1.5ms\tlink-loss   S1[3] 0.25 ");  // any white space between the words
  EXPECT_EQ(f.at, sim::Time::us(1500));
  EXPECT_EQ(f.kind, Kind::LinkLoss);
  EXPECT_EQ(f.link.text, "S1[3]");
  EXPECT_EQ(f.probability, 0.25);

  f = parse_fault("0 link-loss S1[3] 1");
  EXPECT_EQ(f.at, sim::Time::zero());
  EXPECT_EQ(f.probability, 1.0);
}

TEST(Faults, ParsesEveryTextInOrder) {
  const std::vector<api::Fault> faults = parse_faults({"2s link-down L1[1]", "1s link-up L1[1]"});
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].at, sim::Time::s(2));
  EXPECT_EQ(faults[1].kind, Kind::LinkUp);
  EXPECT_THROW(parse_faults({"2s link-down L1[1]", "2s link-down"}), std::invalid_argument);
}

TEST(Faults, BadTextIsOneLineNamingTheFaultAndTheCause) {
  const std::string usage = "expected AT ACTION LINK [PROBABILITY], such as \"2s link-down L5[5]\" or "
                            "\"1s link-loss S1[3] 0.25\"";
  EXPECT_EQ(error_of(""), "--fault '': " + usage);
  EXPECT_EQ(error_of("2s link-down"), "--fault '2s link-down': " + usage);
  EXPECT_EQ(error_of("1s link-loss L1[1] 0.2 9"), "--fault '1s link-loss L1[1] 0.2 9': " + usage);
  EXPECT_EQ(error_of("2 link-down L1[1]"),
            "--fault '2 link-down L1[1]': bad time '2' (examples: 0, 250ns, 10us, 1.5ms, 2s)");
  EXPECT_EQ(error_of("-1s link-down L1[1]"),
            "--fault '-1s link-down L1[1]': bad time '-1s' (examples: 0, 250ns, 10us, 1.5ms, 2s)");
  EXPECT_EQ(error_of("2s link-flap L1[1]"),
            "--fault '2s link-flap L1[1]': unknown action 'link-flap' (known: link-down, link-up, link-loss)");
  EXPECT_EQ(error_of("2s node-down L1"),
            "--fault '2s node-down L1': unknown action 'node-down' (known: link-down, link-up, link-loss)");
  EXPECT_EQ(error_of("2s link-down L1"),
            "--fault '2s link-down L1': expected a link as NODE[PORT] or NODE[PORT]-NODE[PORT], got 'L1'");
  EXPECT_EQ(error_of("2s link-down L1[0]"),
            "--fault '2s link-down L1[0]': expected a link as NODE[PORT] or NODE[PORT]-NODE[PORT], got 'L1[0]'");
  EXPECT_EQ(error_of("2s link-loss L1[1]"),
            "--fault '2s link-loss L1[1]': 'link-loss' needs a probability in [0, 1] after the link");
  EXPECT_EQ(error_of("2s link-loss L1[1] 1.5"),
            "--fault '2s link-loss L1[1] 1.5': the probability must be a number in [0, 1], got '1.5'");
  EXPECT_EQ(error_of("2s link-loss L1[1] -0.1"),
            "--fault '2s link-loss L1[1] -0.1': the probability must be a number in [0, 1], got '-0.1'");
  EXPECT_EQ(error_of("2s link-loss L1[1] half"),
            "--fault '2s link-loss L1[1] half': the probability must be a number in [0, 1], got 'half'");
  EXPECT_EQ(error_of("2s link-down L1[1] 0.5"),
            "--fault '2s link-down L1[1] 0.5': '0.5' after the link: a probability belongs to link-loss only");
  // Control characters are written out: the message stays one printable line.
  EXPECT_EQ(error_of("2s link-down L\x01[1]x"),
            "--fault '2s link-down L\\x01[1]x': expected a link as NODE[PORT] or NODE[PORT]-NODE[PORT], got "
            "'L\\x01[1]x'");
}

// fault_text writes a fault as the option reads it, whatever wrote it first.
TEST(Faults, TextReadsBack) {
  for (const auto& [written, canonical] : std::vector<std::pair<std::string, std::string>>{
           {"2s link-down L5[5]", "2s link-down L5[5]"},
           {"3500ms  link-up S1[3]-H1[1]", "3500ms link-up S1[3]-H1[1]"},
           {"1.5ms link-loss S1[3] 0.1", "1500us link-loss S1[3] 0.1"},
           {"7ps link-loss S1[3] 0.00001", "7ps link-loss S1[3] 1e-05"},
           {"0 link-loss S1[3] 1", "0 link-loss S1[3] 1"}}) {
    const api::Fault f = parse_fault(written);
    EXPECT_EQ(api::fault_text(f), canonical);
    const api::Fault back = parse_fault(api::fault_text(f));
    EXPECT_EQ(back.at, f.at) << written;
    EXPECT_EQ(back.kind, f.kind) << written;
    EXPECT_EQ(back.link.text, f.link.text) << written;
    EXPECT_EQ(back.probability, f.probability) << written;
  }
}

TEST(Faults, ScenarioLinkActionsBecomeFaults) {
  const scenario::Scenario s = scenario::parse_scenario(
      "topology: fat-tree:2:4\n"
      "duration: 5s\n"
      "actions:\n"
      "  - {at: 3s, link-up: \"L2[1]-H3[1]\"}\n"
      "  - {at: 1s, link-down: \"L2[1]\"}\n"
      "  - {at: 2s, join: {node: H2, mgid: \"ff12:4001::1\"}}\n"
      "  - {at: 4s, link-loss: \"S1[3]\", probability: 0.5}\n"
      "  - {at: 4500ms, expect: {node: H2, received: 0}}\n",
      "s.yaml");
  const std::vector<api::Fault> faults = faults_from_scenario(s);
  ASSERT_EQ(faults.size(), 3u);
  EXPECT_EQ(faults[0].at, sim::Time::s(1));
  EXPECT_EQ(faults[0].kind, Kind::LinkDown);
  EXPECT_EQ(faults[0].link.text, "L2[1]");
  EXPECT_EQ(faults[0].origin, "s.yaml:5");
  EXPECT_EQ(faults[1].at, sim::Time::s(3));
  EXPECT_EQ(faults[1].kind, Kind::LinkUp);
  EXPECT_EQ(faults[1].link.far_node, "H3");
  EXPECT_EQ(faults[1].origin, "s.yaml:4");
  EXPECT_EQ(faults[2].kind, Kind::LinkLoss);
  EXPECT_EQ(faults[2].probability, 0.5);
  EXPECT_EQ(faults[2].origin, "s.yaml:7");
  // As `serve --fault` would take them (`ibfab launch` may pass them on so).
  EXPECT_EQ(api::fault_text(faults[1]), "3s link-up L2[1]-H3[1]");
  EXPECT_EQ(api::fault_text(faults[2]), "4s link-loss S1[3] 0.5");
}

TEST(Faults, ScenarioActionsTheEngineDoesNotApplyAreRefused) {
  EXPECT_EQ(scenario_error_of("  - {at: 1ms, link-down: \"L2[1]\", every: 1ms, until: 9ms}\n"),
            "s.yaml:4: 'link-down' repeats (every/until): a served fabric applies each fault once; write one "
            "action per time");
  EXPECT_EQ(scenario_error_of("  - {at: 1ms, node-down: S1}\n"),
            "s.yaml:4: 'node-down' is not a fault a served fabric applies (link-down, link-up, link-loss are)");
  EXPECT_EQ(scenario_error_of("  - {at: 1ms, sm-kill: H1}\n"),
            "s.yaml:4: 'sm-kill' is not a fault a served fabric applies (link-down, link-up, link-loss are)");
  EXPECT_EQ(scenario_error_of("  - {at: 1ms, link-down: \"L2[1]\"}\n"), "(no error)");
}

}  // namespace
}  // namespace ibfab::cli
