#pragma once
// Writes a Topology as ibnetdiscover prints a fabric, in node index order,
// every link from both ends. read_netfile() gives back the same nodes (in
// the same order, with the same GUIDs, ids and descriptions) and the same
// links and rates; propagation is not part of the format (it reads back
// as 10 ns). ibsim loads the output too: its GUID lines set each node's
// GUID, and the comments carry no '=' (which ibsim would take for a port
// option). LIDs are written as 0 (unassigned). Deterministic; O(size).
#include <ostream>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

void write_netfile(std::ostream& out, const Topology& topology);

}  // namespace ibfab::topo
