#pragma once
// "ftree": destination-mod-k routing for fat trees. Switches are ranked by
// their distance from the leaves (the switches with end ports), and every
// cable must join adjacent ranks. The end-port LIDs are numbered in leaf
// order (leaf by switch index, then port, then LID within an LMC range);
// LID number i climbs out of up-port (i / stride) mod ups at each rank,
// where stride is the product of the up-port counts of the ranks below, so
// the hosts of one leaf leave it by different uplinks and a shift
// permutation meets no shared cable on a full fat tree; it comes down by
// the only (or, if several, the i mod count-th) down path. Switch LIDs are
// numbered after the end ports. Routes are minimal and go up then down,
// so they are deadlock-free, except a switch's route to a switch LID it
// can reach only by going down first (a top switch to another top switch),
// which management traffic alone uses.
//
// Fails (with the reason) on a graph that is not a fat tree: no leaf, a
// cable within one rank, or a switch unreachable from the leaves.
//
// Cost: all-pairs BFS (switch_graph.h), then O(n * n * degree) to choose
// each switch's ports towards each destination switch, and the tables.
#include <string>
#include <string_view>

#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

class FatTreeEngine final : public RoutingEngine {
 public:
  std::string_view name() const override { return "ftree"; }
  std::string_view description() const override;
  bool route(const RoutingInput& in, RoutingOutput& out, std::string& error) override;
};

}  // namespace ibfab::sm
