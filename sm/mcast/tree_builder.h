#pragma once
// Multicast tree builders: from a root and the members' edge switches to a
// spanning tree (mcast_tree.h). Chosen by name ("shortest-path"); each
// documents in one line what it optimises.
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
  // A tree rooted at `root` containing the edge switch of every member
  // (McastTree invariants hold), or nullopt if some member cannot be
  // reached. Preconditions: root < n; routes.hops is n x n. Deterministic.
  virtual std::optional<McastTree> build(const RoutingInput& graph, const RoutingOutput& routes, uint32_t root,
                                         std::span<const McastEdge> members) const = 0;
};

// "shortest-path" (OpenSM): edge switches are taken in ascending index
// order; each is reached from the root by stepping, at every switch, out of
// the lowest-numbered port whose neighbour has the fewest hops to it
// (deliberately unbalanced, so that members share branches). A step must
// bring the hop count down, or the member is unreachable. A step into a
// switch already in the tree adds no edge and the walk goes on from there,
// so every switch keeps one parent even where two min-hop paths meet.
// O(edge switches * path length * ports).
class ShortestPathTree final : public TreeBuilder {
 public:
  std::string_view name() const override { return "shortest-path"; }
  std::string_view description() const override;
  std::optional<McastTree> build(const RoutingInput& graph, const RoutingOutput& routes, uint32_t root,
                                 std::span<const McastEdge> members) const override;
};

// nullptr for an unknown name.
std::unique_ptr<TreeBuilder> make_tree_builder(std::string_view name);
std::vector<std::string_view> tree_builder_names();

}  // namespace ibfab::sm
