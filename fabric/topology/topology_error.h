#pragma once
// The one exception type of the topology layer.
//
// what() is always a single line naming where the problem is:
//   "FILE:LINE: problem"  for a net file,
//   "spec 'x': problem"   for a topology spec,
//   "problem"             for a direct call on a Topology.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ibfab::topo {

class TopologyError : public std::runtime_error {
 public:
  explicit TopologyError(const std::string& message) : std::runtime_error(message) {}

  static TopologyError at(std::string_view file, size_t line, std::string_view problem) {
    return TopologyError(std::string(file) + ":" + std::to_string(line) + ": " +
                         std::string(problem));
  }
  static TopologyError in_spec(std::string_view spec, std::string_view problem) {
    return TopologyError("spec '" + std::string(spec) + "': " + std::string(problem));
  }
};

}  // namespace ibfab::topo
