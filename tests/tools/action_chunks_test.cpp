// The scenario reader takes a long `actions:` list a chunk at a time
// (tools/scenario/action_chunks.h): the same actions, the same lines in
// messages, whatever the list's form.
#include "tools/scenario/action_chunks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tools/scenario/scenario_loader.h"

namespace ibfab::scenario {
namespace {

// A scenario of n joins: line 6 + i holds action i (1-based lines).
std::string many(int n, const std::string& after = "fingerprint: 0123456789abcdef\n") {
  std::string t = "topology: fat-tree:2:4\nduration: 1s\n# the joins\nactions:\n  # one per host\n";
  for (int i = 0; i < n; ++i)
    t += "  - {at: " + std::to_string(1000 + i) + "us, join: {node: H" + std::to_string(2 + i % 7) +
         ", mgid: \"ff12:4001::1\"}}\n";
  return t + after;
}

// The reader's message for `text` ("" if it reads).
std::string error_of(const std::string& text) {
  std::string message;
  try { (void)parse_scenario(text, "s.yaml"); } catch (const ScenarioError& e) { message = e.what(); }
  return message;
}

TEST(ActionChunks, ALongListIsSplitAndKeepsItsLines) {
  const std::string text = many(1000);
  const ActionChunks c = ActionChunks::split(text);
  EXPECT_EQ(c.chunks(), 4u);
  EXPECT_EQ(std::count(c.rest().begin(), c.rest().end(), '\n'), std::count(text.begin(), text.end(), '\n'));
  EXPECT_NE(c.rest().find("actions: []\n"), std::string::npos);
  const Scenario s = parse_scenario(text, "s.yaml");
  ASSERT_EQ(s.actions.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(s.actions[i].line, 6 + i);
    EXPECT_EQ(s.actions[i].at, sim::Time::us(1000 + i));
    EXPECT_EQ(s.actions[i].node, "H" + std::to_string(2 + i % 7));
  }
  EXPECT_EQ(s.fingerprint.value_or(""), "0123456789abcdef");  // a key after the list
}

TEST(ActionChunks, MistakesInAnyChunkNameTheirLine) {
  std::string text = many(700);
  const std::string good = "H" + std::to_string(2 + 600 % 7) + ", mgid";
  const std::size_t at = text.find("at: 1600us");
  text.replace(text.find(good, at), good.size(), "H2, mgid: \"ff12:4001::1\", colour: red, x");
  EXPECT_EQ(error_of(text), "s.yaml:606: unknown key 'colour' in 'join'") << "the 601st action, in the third chunk";
  std::string broken = many(700);
  broken.replace(broken.find("at: 1500us"), 10, "at: [1500us");
  EXPECT_EQ(error_of(broken).substr(0, 28), "s.yaml:506: not valid YAML: ");
}

TEST(ActionChunks, OtherFormsAreReadWhole) {
  // A flow list, and a list of block maps at the key's own indentation.
  EXPECT_EQ(ActionChunks::split("topology: ring:4\nactions: [{at: 0, probe: H1}]\n").chunks(), 0u);
  const std::string block =
      "topology: fat-tree:2:4\nduration: 1s\nactions:\n- at: 1ms\n  join: {node: H2, mgid: \"ff12:4001::1\"}\n"
      "- at: 2ms\n  leave:\n    node: H2\n    mgid: \"ff12:4001::1\"\nseed: 4\n";
  EXPECT_EQ(ActionChunks::split(block).chunks(), 1u);
  const Scenario s = parse_scenario(block, "s.yaml");
  ASSERT_EQ(s.actions.size(), 2u);
  EXPECT_EQ(s.actions[1].line, 6);
  EXPECT_EQ(s.actions[1].kind, Action::Kind::Leave);
  EXPECT_EQ(s.seed, 4u);
  EXPECT_EQ(ActionChunks::split("topology: ring:4\nactions:\n  probe: H1\n").chunks(), 0u);  // a map: read whole
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  probe: H1\n"), "s.yaml:3: 'actions' must be a list");
}

TEST(ActionChunks, AliasesSeeTheirAnchorsAcrossTheWholeList) {
  // An anchor in the first action, used by a 601st (two chunks later).
  std::string text = many(600, "");
  text.replace(text.find("{node: H2"), 9, "&first {node: H2");
  text += "  - {at: 1700us, join: *first}\n";
  EXPECT_EQ(ActionChunks::split(text).chunks(), 0u);
  const Scenario s = parse_scenario(text, "s.yaml");
  ASSERT_EQ(s.actions.size(), 601u);
  EXPECT_EQ(s.actions.back().at, sim::Time::us(1700));
  EXPECT_EQ(s.actions.back().node, "H2");
  // An anchor before the list, used inside it.
  const Scenario t = parse_scenario(
      "topology: fat-tree:2:4\nduration: 1s\nsms: [{node: &sm H3, routing: minhop}]\nactions:\n"
      "  - {at: 1ms, join: {node: *sm, mgid: \"ff12:4001::1\"}}\n",
      "s.yaml");
  ASSERT_EQ(t.actions.size(), 1u);
  EXPECT_EQ(t.actions[0].node, "H3");
}

TEST(ActionChunks, SortByTimeKeepsFileOrderOnTies) {
  std::vector<Action> a(7);
  const int at[] = {3, 1, 3, 2, 1, 0, 3};
  for (int i = 0; i < 7; ++i) {
    a[i].at = sim::Time::ms(at[i]);
    a[i].line = i + 1;
    a[i].node = "H" + std::to_string(i + 1);
  }
  sort_by_time(a);
  const int lines[] = {6, 2, 5, 4, 1, 3, 7};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(a[i].line, lines[i]);
    EXPECT_EQ(a[i].node, "H" + std::to_string(lines[i]));
  }
}

}  // namespace
}  // namespace ibfab::scenario
