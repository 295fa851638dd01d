#include "fabric/topology/topology_spec.h"

#include <sstream>
#include <string_view>
#include <vector>

#include "fabric/topology/fat_tree.h"
#include "fabric/topology/netfile_reader.h"
#include "fabric/topology/switch_grid.h"
#include "fabric/topology/text_file.h"

namespace ibfab::topo {
namespace {

constexpr const char* kGenerators = "fat-tree:L:K, ring:N[:H], line:N[:H], torus:XxY[:H]";

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// Decimal digits only; at most 9 of them, so later products cannot overflow.
uint64_t number(std::string_view field) {
  if (field.empty()) throw TopologyError("missing number");
  uint64_t v = 0;
  for (char c : field) {
    if (c < '0' || c > '9') throw TopologyError("'" + std::string(field) + "' is not a number");
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > 999'999'999) throw TopologyError("'" + std::string(field) + "' is too large");
  }
  return v;
}

Topology generate(std::string_view word, const std::vector<std::string_view>& args) {
  const size_t n = args.size();
  if (word == "fat-tree") {
    if (n != 2) throw TopologyError("expected fat-tree:L:K (L = 2 or 3 levels, K = switch radix)");
    const uint64_t levels = number(args[0]);
    const uint64_t k = number(args[1]);
    if (levels != 2 && levels != 3)
      throw TopologyError("levels must be 2 or 3 (got " + std::to_string(levels) + ")");
    if (k > kMaxSwitchPorts)
      throw TopologyError("K must be between 4 and 64 (got " + std::to_string(k) + ")");
    return levels == 2 ? make_fat_tree_2(static_cast<unsigned>(k)) : make_fat_tree_3(static_cast<unsigned>(k));
  }
  if (word == "torus") {
    if (n < 1 || n > 2) throw TopologyError("expected torus:XxY[:H]");
    const size_t x = args[0].find('x');
    if (x == std::string_view::npos) throw TopologyError("expected torus:XxY[:H], got no 'x' in '" + std::string(args[0]) + "'");
    const uint64_t cols = number(args[0].substr(0, x));
    const uint64_t rows = number(args[0].substr(x + 1));
    const uint64_t hosts = n == 2 ? number(args[1]) : 1;
    return make_torus(cols, rows, hosts);
  }
  if (n < 1 || n > 2) throw TopologyError("expected " + std::string(word) + ":N[:H]");
  const uint64_t switches = number(args[0]);
  const uint64_t hosts = n == 2 ? number(args[1]) : 1;
  return word == "ring" ? make_ring(switches, hosts) : make_line(switches, hosts);
}

bool generator_like(std::string_view word) {
  if (word.empty()) return false;
  for (char c : word)
    if (!((c >= 'a' && c <= 'z') || c == '-')) return false;
  return true;
}

}  // namespace

Topology load_topology(const std::string& spec) {
  if (spec.empty()) throw TopologyError::in_spec(spec, "empty topology spec");
  const std::string_view view(spec);
  const size_t colon = view.find(':');
  const std::string_view word = view.substr(0, colon);
  const bool known = word == "fat-tree" || word == "ring" || word == "line" || word == "torus";
  if (known) {
    std::vector<std::string_view> args;
    if (colon != std::string_view::npos) args = split(view.substr(colon + 1), ':');
    try {
      return generate(word, args);
    } catch (const TopologyError& e) {
      throw TopologyError::in_spec(spec, e.what());
    }
  }
  if (colon != std::string_view::npos && generator_like(word))
    throw TopologyError::in_spec(spec, "unknown generator '" + std::string(word) + "' (expected " +
                                           kGenerators + ", or a net file path)");
  std::string text;
  try {
    text = read_text_file(spec, kMaxNetFileBytes, "net files");
  } catch (const TextFileError& e) {
    throw TopologyError(e.what());
  }
  std::istringstream in(std::move(text));
  return read_netfile(in, spec);
}

}  // namespace ibfab::topo
