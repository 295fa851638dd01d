#include "sm/mcast/tree_builder.h"

#include <algorithm>
#include <tuple>

namespace ibfab::sm {

std::string_view ShortestPathTree::description() const {
  return "OpenSM's tree: each member on a min-hop path to the root, lowest port first (shared branches)";
}

std::optional<McastTree::Node> ShortestPathTree::parent(const RoutingInput& graph, const RoutingOutput& routes,
                                                        uint32_t root, uint32_t sw) const {
  const std::size_t n = graph.switches.size();
  const uint8_t here = routes.switch_hops(sw, root, n);
  if (here == kUnreachable || here == 0) return std::nullopt;
  const RoutingSwitch& s = graph.switches[sw];
  for (std::size_t p = 1; p < s.ports.size(); ++p) {
    const RoutingSwitch::Peer& peer = s.ports[p];
    if (peer.kind != RoutingSwitch::Peer::Kind::Switch || peer.sw >= n) continue;
    if (routes.switch_hops(peer.sw, root, n) == here - 1)
      return McastTree::Node{sw, peer.sw, static_cast<uint8_t>(p), peer.port, here};
  }
  return std::nullopt;
}

std::optional<McastTree> build_tree(const TreeBuilder& builder, const RoutingInput& graph,
                                    const RoutingOutput& routes, uint32_t root, std::span<const McastEdge> members) {
  const std::size_t n = graph.switches.size();
  if (root >= n || routes.hops.size() != n * n) return std::nullopt;
  constexpr uint32_t kOut = UINT32_MAX;
  std::vector<uint32_t> node_of(n, kOut);  // switch -> its node (kOut: not in the tree yet)
  std::vector<McastTree::Node> nodes{{root, root, 0, 0, 0}};
  node_of[root] = 0;
  for (const McastEdge& m : members) {
    if (m.sw >= n) return std::nullopt;
    for (uint32_t s = m.sw; node_of[s] == kOut;) {
      const std::optional<McastTree::Node> node = builder.parent(graph, routes, root, s);
      if (!node) return std::nullopt;
      node_of[s] = static_cast<uint32_t>(nodes.size());
      nodes.push_back(*node);
      s = node->parent;
    }
  }
  // Parents before children: by depth, then switch index.
  std::sort(nodes.begin() + 1, nodes.end(),
            [](const McastTree::Node& a, const McastTree::Node& b) { return std::tie(a.depth, a.sw) < std::tie(b.depth, b.sw); });
  return McastTree{std::move(nodes)};
}

std::unique_ptr<TreeBuilder> make_tree_builder(std::string_view name) {
  if (name == "shortest-path") return std::make_unique<ShortestPathTree>();
  return nullptr;
}

std::vector<std::string_view> tree_builder_names() { return {"shortest-path"}; }

}  // namespace ibfab::sm
