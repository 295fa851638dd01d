#pragma once
// Multicast tree builders: which neighbour a switch hangs from in a tree
// rooted at a given switch. Chosen by name ("shortest-path"); each
// documents in one line what it optimises.
//
// A builder decides each switch's parent from the switch and the root
// alone, one hop nearer the root, so a tree is the union of the chains
// from its members' edge switches up to the root: the same whatever order
// members come in, and grown or pruned one member at a time.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sm/mcast/mcast_tree.h"
#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

class TreeBuilder {
 public:
  virtual ~TreeBuilder() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // The tree node of switch `sw` (sw != root): its parent, a neighbour
  // with one hop less to `root`, the cable's two ends, and depth =
  // hops(sw, root). nullopt if `sw` cannot reach `root`. Preconditions:
  // root, sw < n; routes.hops is n x n. Deterministic.
  virtual std::optional<McastTree::Node> parent(const RoutingInput& graph, const RoutingOutput& routes,
                                                uint32_t root, uint32_t sw) const = 0;
};

// "shortest-path": a switch hangs from the neighbour behind its
// lowest-numbered port among those one hop nearer the root. Members share
// branches as in OpenSM's walk down from the root (on fat trees the trees
// are the same), but each switch's parent depends on nothing else, so two
// min-hop paths that meet never give a switch two parents.
class ShortestPathTree final : public TreeBuilder {
 public:
  std::string_view name() const override { return "shortest-path"; }
  std::string_view description() const override;
  std::optional<McastTree::Node> parent(const RoutingInput& graph, const RoutingOutput& routes, uint32_t root,
                                        uint32_t sw) const override;
};

// The whole tree of `members` rooted at `root` (McastTree invariants
// hold), or nullopt if some member's edge switch cannot reach it. For
// tests and one-off queries; the multicast manager grows trees member by
// member. O(members * depth).
std::optional<McastTree> build_tree(const TreeBuilder& builder, const RoutingInput& graph,
                                    const RoutingOutput& routes, uint32_t root, std::span<const McastEdge> members);

// nullptr for an unknown name.
std::unique_ptr<TreeBuilder> make_tree_builder(std::string_view name);
std::vector<std::string_view> tree_builder_names();

}  // namespace ibfab::sm
