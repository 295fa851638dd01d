#pragma once
// What libibumad's CA, port and I/O halves share: a CA's HCA from the
// engine, the default CA name, and the port a NULL CA / port 0 picks.
#include <optional>

#include "api/client/protocol.h"

namespace ibfab::umad {

inline constexpr const char* kCaName = "ibfab0";

// The HCA named `ca_name` as the engine sees it now (NULL or "ibfab0": the
// process's host; in embedded mode "ibfab1".. the other hosts, as
// libibverbs names them); nullopt without a fabric or such a CA.
std::optional<api::NodeReply> host(const char* ca_name = nullptr);

// Port 0 means the best port: the first Active, else LinkUp, else the first.
inline int best_port(const api::NodeReply& n) {
  for (uint32_t i = 0; i < n.num_ports; ++i)
    if (n.ports[i].state == 4) return static_cast<int>(i + 1);
  for (uint32_t i = 0; i < n.num_ports; ++i)
    if (n.ports[i].phys_state == 5) return static_cast<int>(i + 1);
  return n.num_ports ? 1 : 0;
}

}  // namespace ibfab::umad
