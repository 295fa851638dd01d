#pragma once
// Ring, line and 2-D torus generators: switches S1.. with `hosts` HCAs
// each (H1.. in switch order, switch Si port p <-> host H{(i-1)*hosts + p}
// port 1). Node order: switches, then hosts. Links at 4xEDR, 10 ns.
//
// Switch ports: 1..hosts take the hosts; the fabric ports follow:
//   ring:N  (N >= 3)  Si port hosts+1 <-> S{i mod N + 1} port hosts+2
//   line:N  (N >= 1)  the same without the S{N} -> S1 link
//   torus:XxY (X, Y >= 3): switch (x, y), 0-based, is S{y*X + x + 1};
//           port hosts+1 <-> port hosts+2 of ((x+1) mod X, y)
//           port hosts+3 <-> port hosts+4 of (x, (y+1) mod Y)
// Smaller rings and tori would need parallel links or self-loops.
// Switches have 36 ports, or exactly as many as needed when that is more;
// more than 64 is an error. At most kMaxGridNodes nodes in all.
//
// All throw TopologyError with the problem (no location) on bad arguments.
#include <cstdint>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

inline constexpr uint64_t kMaxGridNodes = 1'000'000;

Topology make_ring(uint64_t switches, uint64_t hosts);
Topology make_line(uint64_t switches, uint64_t hosts);
Topology make_torus(uint64_t x, uint64_t y, uint64_t hosts);

}  // namespace ibfab::topo
