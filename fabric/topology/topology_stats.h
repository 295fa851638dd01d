#pragma once
// Size and reach of a topology.
#include <cstddef>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

struct TopologyStats {
  size_t hcas = 0, switches = 0, links = 0;
  size_t switch_links = 0;  // both ends on switches
  size_t host_links = 0;    // at least one end on an HCA
  // Largest host-to-host hop count (links traversed) over shortest paths
  // that do not pass through a third HCA (HCAs do not forward). 0 when
  // there are fewer than two hosts or when the topology is not connected.
  unsigned diameter = 0;
  // Every node is linked (transitively) to every other, and every host can
  // reach every other host without transiting an HCA.
  bool connected = false;
};

// Connectivity: connected components over all nodes. Diameter: one BFS on
// the switch graph per distinct set of switches that hosts attach to (one
// per leaf in a fat tree), never one per host: O(G * (S + L)) for G such
// sets, S switches, L switch links. A direct HCA-to-HCA link counts as one
// hop only between hosts that have no switch link; otherwise the pair is
// measured through the switches (an upper bound).
TopologyStats compute_stats(const Topology& topology);

}  // namespace ibfab::topo
