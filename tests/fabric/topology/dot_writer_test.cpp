#include "fabric/topology/dot_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "fabric/topology/fat_tree.h"

namespace ibfab::topo {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string dot(const Topology& t) {
  std::ostringstream out;
  write_dot(out, t);
  return out.str();
}

TEST(DotWriter, Structure) {
  const Topology t = make_fat_tree_2(4);
  const std::string text = dot(t);
  EXPECT_EQ(text.rfind("graph fabric {\n", 0), 0u);
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");
  EXPECT_EQ(count(text, "[shape=box];"), t.switch_count());
  EXPECT_EQ(count(text, "[shape=ellipse];"), t.hca_count());
  EXPECT_EQ(count(text, " -- "), t.links().size());
  EXPECT_EQ(count(text, "\n"), 3 + t.nodes().size() + t.links().size());
  EXPECT_NE(text.find("  \"L1\" [shape=box];\n"), std::string::npos);
  EXPECT_NE(text.find("  \"H8\" [shape=ellipse];\n"), std::string::npos);
  EXPECT_NE(text.find("  \"L1\" -- \"H1\" [taillabel=\"1\", headlabel=\"1\"];\n"), std::string::npos);
  EXPECT_NE(text.find("  \"L4\" -- \"S2\" [taillabel=\"4\", headlabel=\"4\"];\n"), std::string::npos);
  EXPECT_EQ(dot(make_fat_tree_2(4)), text);  // deterministic
}

TEST(DotWriter, EscapesBackslashes) {
  Topology t;
  NodeDesc n;
  n.kind = NodeKind::Switch;
  n.name = "a\\b";
  n.node_guid = 1;
  n.num_ports = 1;
  t.add_node(n);
  EXPECT_NE(dot(t).find("\"a\\\\b\" [shape=box]"), std::string::npos);
}

}  // namespace
}  // namespace ibfab::topo
