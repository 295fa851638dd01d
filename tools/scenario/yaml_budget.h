#pragma once
// A YAML text loaded only if its tree stays within a number of nodes.
// yaml-cpp keeps about 470 bytes per scalar, map or sequence it loads, so
// a 16 MiB file of "[1,1,1,...]" would take some 4 GB; its aliases cost
// little to load but each becomes a whole action. The text is first
// walked as a stream of parse events (nothing kept), counting every node
// and alias, and loaded only if the count is within the budget.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>

namespace ibfab::scenario {

struct YamlOverBudget {
  std::size_t line = 0;  // 0-based, where the node past the budget starts
};

// The text's first document; or, when it holds more than `max_nodes`
// nodes, where the first one past them is. Throws YAML::ParserException
// for text that is not YAML, as YAML::Load does.
struct BoundedYaml {
  YAML::Node root;
  std::optional<YamlOverBudget> over;
};
BoundedYaml load_within(const std::string& text, std::size_t max_nodes);

}  // namespace ibfab::scenario
