#include "fabric/topology/topology_builder.h"

namespace ibfab::topo {

uint32_t TopologyBuilder::add(NodeKind kind, std::string name, uint8_t ports, uint16_t device) {
  NodeDesc n;
  n.kind = kind;
  n.name = std::move(name);
  n.num_ports = ports;
  n.node_guid = guids_.next(kind, ports);
  n.vendor_id = kMellanoxVendorId;
  n.device_id = device;
  return topo_.add_node(std::move(n));
}

uint32_t TopologyBuilder::add_switch(std::string name, uint8_t ports) {
  return add(NodeKind::Switch, std::move(name), ports, kSwitchDeviceId);
}

uint32_t TopologyBuilder::add_hca(std::string name, uint8_t ports) {
  return add(NodeKind::Hca, std::move(name), ports, kHcaDeviceId);
}

void TopologyBuilder::cable(uint32_t a, uint8_t pa, uint32_t b, uint8_t pb) {
  topo_.connect(PortRef{a, pa}, PortRef{b, pb}, kDefaultRate, kDefaultPropagation);
}

void TopologyBuilder::reserve(size_t nodes) { topo_.reserve(nodes); }

}  // namespace ibfab::topo
