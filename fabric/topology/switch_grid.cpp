#include "fabric/topology/switch_grid.h"

#include <algorithm>
#include <string>
#include <vector>

#include "fabric/topology/topology_builder.h"

namespace ibfab::topo {
namespace {

constexpr uint64_t kDefaultRadix = 36;

// Switch radix for `hosts` hosts and `fabric_ports` switch-to-switch ports.
uint8_t radix(uint64_t hosts, uint64_t fabric_ports) {
  if (hosts > kMaxSwitchPorts)
    throw TopologyError("too many hosts per switch (" + std::to_string(hosts) + ")");
  const uint64_t need = hosts + fabric_ports;
  if (need > kMaxSwitchPorts)
    throw TopologyError(std::to_string(hosts) + " hosts per switch need " + std::to_string(need) +
                        " ports (at most 64)");
  return static_cast<uint8_t>(std::max(kDefaultRadix, need));
}

[[noreturn]] void too_many() {
  throw TopologyError("too many nodes (at most " + std::to_string(kMaxGridNodes) + ")");
}

// Precondition: hosts <= 64 (radix() checked it), so the product cannot
// overflow once switches is bounded.
void check_size(uint64_t switches, uint64_t hosts) {
  if (switches > kMaxGridNodes || switches * (hosts + 1) > kMaxGridNodes) too_many();
}

uint8_t port(uint64_t p) { return static_cast<uint8_t>(p); }

// Adds n switches S1..Sn and their hosts; returns the switch indices.
std::vector<uint32_t> add_switches(TopologyBuilder& b, uint64_t n, uint64_t hosts, uint8_t ports) {
  b.reserve(n * (hosts + 1));
  std::vector<uint32_t> sw(n);
  for (uint64_t i = 0; i < n; ++i) sw[i] = b.add_switch("S" + std::to_string(i + 1), ports);
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t p = 1; p <= hosts; ++p)
      b.cable(sw[i], port(p), b.add_hca("H" + std::to_string(i * hosts + p)), 1);
  return sw;
}

Topology chain(uint64_t n, uint64_t hosts, bool closed) {
  const uint8_t ports = radix(hosts, 2);
  check_size(n, hosts);
  TopologyBuilder b;
  const auto sw = add_switches(b, n, hosts, ports);
  const uint64_t links = closed ? n : n - 1;
  for (uint64_t i = 0; i < links; ++i) b.cable(sw[i], port(hosts + 1), sw[(i + 1) % n], port(hosts + 2));
  return b.take();
}

}  // namespace

Topology make_ring(uint64_t switches, uint64_t hosts) {
  if (switches < 3) throw TopologyError("a ring needs at least 3 switches (got " + std::to_string(switches) + ")");
  return chain(switches, hosts, true);
}

Topology make_line(uint64_t switches, uint64_t hosts) {
  if (switches < 1) throw TopologyError("a line needs at least 1 switch (got 0)");
  return chain(switches, hosts, false);
}

Topology make_torus(uint64_t x, uint64_t y, uint64_t hosts) {
  if (x < 3 || y < 3)
    throw TopologyError("a torus needs at least 3 switches in each dimension (got " +
                        std::to_string(x) + "x" + std::to_string(y) + ")");
  const uint8_t ports = radix(hosts, 4);
  if (x > kMaxGridNodes || y > kMaxGridNodes) too_many();
  check_size(x * y, hosts);
  TopologyBuilder b;
  const auto sw = add_switches(b, x * y, hosts, ports);
  for (uint64_t j = 0; j < y; ++j) {
    for (uint64_t i = 0; i < x; ++i) {
      const uint64_t here = j * x + i;
      b.cable(sw[here], port(hosts + 1), sw[j * x + (i + 1) % x], port(hosts + 2));
      b.cable(sw[here], port(hosts + 3), sw[((j + 1) % y) * x + i], port(hosts + 4));
    }
  }
  return b.take();
}

}  // namespace ibfab::topo
