#pragma once
// Builds a topology from a one-word spec, as scenarios and the CLI name
// them:
//   fat-tree:2:K   fat-tree:3:K          (fat_tree.h; K even, 4..64)
//   ring:N[:H]  line:N[:H]  torus:XxY[:H] (switch_grid.h; H defaults to 1)
//   anything else: a net file path (netfile_reader.h). A path that starts
//   with a generator word and ':' must be written "./ring:..." instead.
// Numbers are plain decimal digits. Throws TopologyError:
//   "spec 'x': problem" for a malformed or out-of-range generator spec or
//   an unknown generator word ("mesh:4");
//   "FILE: problem" for a file that cannot be opened or read, is no
//   regular file (a FIFO, a device) or is larger than kMaxNetFileBytes;
//   "FILE:LINE: problem" from the net-file reader.
#include <cstddef>
#include <string>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

// The largest net file read (an ibnetdiscover dump of 10,000 hosts is ~5 MB).
inline constexpr std::size_t kMaxNetFileBytes = std::size_t{64} << 20;

Topology load_topology(const std::string& spec);

}  // namespace ibfab::topo
