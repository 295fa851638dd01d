#include "sm/routing/min_hop.h"

#include <vector>

#include "sm/routing/forwarding_tables.h"
#include "sm/routing/switch_graph.h"

namespace ibfab::sm {

std::string_view MinHopEngine::description() const {
  return "minimum-hop paths, LIDs balanced over equal-hop ports; not deadlock-free on cycles";
}

bool MinHopEngine::route(const RoutingInput& in, RoutingOutput& out, std::string& error) {
  SwitchGraph g;
  if (!SwitchGraph::build(in, g, error)) return false;
  const std::vector<Dist> dist = all_pairs_distances(g);
  fill_forwarding_tables(g, in.max_lid, dist, NextHopRule::MinHop, {}, out);
  return true;
}

}  // namespace ibfab::sm
