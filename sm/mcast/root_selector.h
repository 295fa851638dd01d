#pragma once
// Multicast root selection: which switch a group's spanning tree grows
// from. Chosen by name ("min-max-hop", "least-loaded"); each documents in
// one line what it optimises.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sm/mcast/mcast_tree.h"
#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

struct RootQuery {
  const RoutingInput& graph;
  const RoutingOutput& routes;          // hops must be n x n (n = graph.switches.size())
  std::span<const McastEdge> members;   // at least one
  // Per switch index: how many other multicast trees the switch is part
  // of right now (the group being routed is not counted). Empty = all 0.
  std::span<const uint32_t> trees_per_switch;
};

// Cost of rooting at `candidate`, as OpenSM counts it: the largest, over
// the members, of hops(candidate, edge switch) + 1 for a CA member (0 for
// a switch's own port 0). kNoRoot if some member's edge switch is
// unreachable from the candidate. O(members).
inline constexpr uint32_t kNoRoot = UINT32_MAX;
uint32_t max_member_hops(const RootQuery& q, uint32_t candidate);

class RootSelector {
 public:
  virtual ~RootSelector() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // A switch index from which every member's edge switch is reachable, or
  // nullopt if there is none. Deterministic: same query, same answer.
  virtual std::optional<uint32_t> select(const RootQuery& q) const = 0;
};

// "min-max-hop" (OpenSM): the lowest max_member_hops; the lowest switch
// index among equals. O(n * members).
class MinMaxHopRoot final : public RootSelector {
 public:
  std::string_view name() const override { return "min-max-hop"; }
  std::string_view description() const override;
  std::optional<uint32_t> select(const RootQuery& q) const override;
};

// "least-loaded": among switches whose max_member_hops is at most one more
// than the minimum, the one in the fewest trees; ties go to the lower
// max_member_hops, then the lower index. O(n * members).
class LeastLoadedRoot final : public RootSelector {
 public:
  std::string_view name() const override { return "least-loaded"; }
  std::string_view description() const override;
  std::optional<uint32_t> select(const RootQuery& q) const override;
};

// nullptr for an unknown name.
std::unique_ptr<RootSelector> make_root_selector(std::string_view name);
std::vector<std::string_view> root_selector_names();

}  // namespace ibfab::sm
