#pragma once
// The cost of rooting one group's multicast tree at each switch, as OpenSM
// counts it: the largest, over the group's edge switches, of the hops from
// the candidate to the edge switch, plus 1 if a CA member hangs off that
// edge switch (0 if only the switch's own port 0 is a member). kNoRoot
// where some edge switch is unreachable from the candidate.
//
// RootCost keeps these costs as edge switches come and go, in O(switches)
// per change instead of O(switches * edges) per group: besides each
// candidate's cost it counts the edge switches at that cost, and only a
// candidate whose count drops to zero is recounted over the remaining
// edges.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sm/mcast/mcast_tree.h"
#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

inline constexpr uint8_t kNoRoot = 0xFF;

// The members of one group that hang off one edge switch.
struct EdgeMembers {
  uint32_t ca = 0;    // CA ports (each one hop beyond the switch)
  bool self = false;  // the switch's own port 0
  bool empty() const { return ca == 0 && !self; }
  uint8_t extra() const { return ca ? 1 : 0; }
};
using EdgeMap = std::unordered_map<uint32_t, EdgeMembers>;  // edge switch index -> members

class RootCost {
 public:
  // `routes.hops` is n x n for the n switches of the graph it was routed on.
  RootCost(const RoutingOutput& routes, std::size_t n) : routes_(&routes), cost_(n, 0), at_cost_(n, 0) {}

  // Edge switch `edge` now counts with `extra` (it was not counted before).
  void add(uint32_t edge, uint8_t extra);
  // Edge switch `edge`, counted with `extra`, is gone; `remaining` holds the
  // edge switches still counted (an entry for `edge` itself is skipped, so
  // a caller changing its extra may remove, then add it again).
  void remove(uint32_t edge, uint8_t extra, const EdgeMap& remaining);

  std::span<const uint8_t> costs() const { return cost_; }

 private:
  uint8_t value(uint32_t candidate, uint32_t edge, uint8_t extra) const;
  void fold(uint32_t candidate, uint8_t v);  // one more edge switch, of value v

  const RoutingOutput* routes_;
  std::vector<uint8_t> cost_;      // per candidate; 0 while no edge is counted
  std::vector<uint32_t> at_cost_;  // per candidate: edge switches whose value is cost_
};

// The costs from scratch, for a list of members (tests, one-off queries).
// Precondition: every member's sw < n.
std::vector<uint8_t> root_costs(const RoutingOutput& routes, std::size_t n, std::span<const McastEdge> members);

}  // namespace ibfab::sm
