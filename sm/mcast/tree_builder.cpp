#include "sm/mcast/tree_builder.h"

#include <algorithm>

namespace ibfab::sm {

std::string_view ShortestPathTree::description() const {
  return "OpenSM's tree: each member on a min-hop path from the root, lowest port first (shared branches)";
}

std::optional<McastTree> ShortestPathTree::build(const RoutingInput& graph, const RoutingOutput& routes,
                                                 uint32_t root, std::span<const McastEdge> members) const {
  const std::size_t n = graph.switches.size();
  if (root >= n || routes.hops.size() != n * n) return std::nullopt;
  std::vector<uint32_t> targets;
  for (const McastEdge& m : members) {
    if (m.sw >= n) return std::nullopt;
    targets.push_back(m.sw);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());

  McastTree tree;
  constexpr uint32_t kOut = UINT32_MAX;
  std::vector<uint32_t> node_of(n, kOut);  // switch -> index into tree.nodes
  tree.nodes.push_back({root, root, 0, 0, 0});
  node_of[root] = 0;
  for (const uint32_t t : targets) {
    uint32_t s = root;
    while (s != t) {
      const uint8_t here = routes.switch_hops(s, t, n);
      if (here == kUnreachable) return std::nullopt;
      const RoutingSwitch& sw = graph.switches[s];
      uint8_t best_port = 0;
      uint8_t best_hops = here;  // a step must do better than staying
      for (std::size_t p = 1; p < sw.ports.size(); ++p) {
        const RoutingSwitch::Peer& peer = sw.ports[p];
        if (peer.kind != RoutingSwitch::Peer::Kind::Switch || peer.sw >= n) continue;
        const uint8_t h = routes.switch_hops(peer.sw, t, n);
        if (h < best_hops) {
          best_hops = h;
          best_port = static_cast<uint8_t>(p);
        }
      }
      if (best_port == 0) return std::nullopt;
      const RoutingSwitch::Peer& next = sw.ports[best_port];
      if (node_of[next.sw] == kOut) {
        const uint8_t depth = tree.nodes[node_of[s]].depth;
        if (depth == UINT8_MAX) return std::nullopt;
        node_of[next.sw] = static_cast<uint32_t>(tree.nodes.size());
        tree.nodes.push_back({next.sw, s, next.port, best_port, static_cast<uint8_t>(depth + 1)});
      }
      s = next.sw;
    }
  }
  return tree;
}

std::unique_ptr<TreeBuilder> make_tree_builder(std::string_view name) {
  if (name == "shortest-path") return std::make_unique<ShortestPathTree>();
  return nullptr;
}

std::vector<std::string_view> tree_builder_names() { return {"shortest-path"}; }

}  // namespace ibfab::sm
