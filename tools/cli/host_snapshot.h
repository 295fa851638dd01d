#pragma once
// What the kernel of one host of a served fabric would show about its
// HCA, asked from the engine at one instant: the node and its ports as the
// SM configured them (state, LIDs, GIDs, P_Keys, rate) and each port's
// IPoIB addresses from the engine's address plan. `ibfab exec` builds the
// host's /sys, /dev and network view from it (host_view.h).
#include <string>
#include <vector>

#include "api/client/cm_protocol.h"
#include "api/client/protocol.h"

namespace ibfab::cli {

struct HostSnapshot {
  api::NodeReply node;                      // ports[0 .. num_ports)
  std::vector<api::CmPortAddress> addresses;  // one per port, port 1 first
};

// Asks the engine at `socket` about host `node`. Throws std::runtime_error
// saying what went wrong (no engine, no such host, a refused request).
HostSnapshot take_snapshot(const std::string& socket, const std::string& node);

}  // namespace ibfab::cli
