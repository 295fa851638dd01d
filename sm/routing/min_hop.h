#pragma once
// "minhop": every switch forwards every LID along a minimum-hop path over
// the switch graph, spreading LIDs over equal-hop ports by load
// (forwarding_tables.h: least-loaded port first, ties to the lowest port;
// the LIDs of an LMC > 0 port leave by different ports where there are
// enough). Not deadlock-free on topologies with cycles (rings, tori).
//
// Cost: all-pairs BFS, 64 sources per pass (switch_graph.h), then the
// tables (forwarding_tables.h). Memory: the tables and hops, plus 2 * n^2
// bytes of distances while routing. hops saturate at 254.
#include <string>
#include <string_view>

#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

class MinHopEngine final : public RoutingEngine {
 public:
  std::string_view name() const override { return "minhop"; }
  std::string_view description() const override;
  // Fails only on a malformed input (SwitchGraph::build). LIDs behind
  // switches that s cannot reach get kNoRoute in s's table.
  bool route(const RoutingInput& in, RoutingOutput& out, std::string& error) override;
};

}  // namespace ibfab::sm
