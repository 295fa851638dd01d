#pragma once
// What libibumad's CA, port and I/O halves share: the host's HCA from the
// engine, its one CA name, and the port a NULL CA / port 0 picks.
#include <optional>

#include "api/client/protocol.h"

namespace ibfab::umad {

inline constexpr const char* kCaName = "ibfab0";

// The process's host as the engine sees it now; nullopt without a fabric.
std::optional<api::NodeReply> host();

// Port 0 means the best port: the first Active, else LinkUp, else the first.
inline int best_port(const api::NodeReply& n) {
  for (uint32_t i = 0; i < n.num_ports; ++i)
    if (n.ports[i].state == 4) return static_cast<int>(i + 1);
  for (uint32_t i = 0; i < n.num_ports; ++i)
    if (n.ports[i].phys_state == 5) return static_cast<int>(i + 1);
  return n.num_ports ? 1 : 0;
}

}  // namespace ibfab::umad
