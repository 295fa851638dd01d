#pragma once
// Graphviz DOT export: an undirected graph "fabric" with one node per
// fabric node (switches as boxes, HCAs as ellipses, in node index order)
// and one edge per link (in link order), labelled with the port numbers at
// each end (taillabel = first end, headlabel = second end). Deterministic;
// O(nodes + links).
#include <ostream>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

void write_dot(std::ostream& out, const Topology& topology);

}  // namespace ibfab::topo
