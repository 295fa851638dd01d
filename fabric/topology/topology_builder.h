#pragma once
// Assembles generated topologies: nodes with the defaults every generator
// shares (GUIDs from a GuidAllocator, Mellanox vendor/device ids,
// description = name) and links at the default rate and propagation.
#include <cstdint>
#include <string>

#include "fabric/model/link_rate.h"
#include "fabric/topology/guid_allocator.h"
#include "fabric/topology/topology.h"
#include "sim/time.h"

namespace ibfab::topo {

inline constexpr fabric::LinkRate kDefaultRate{fabric::LinkSpeed::EDR, fabric::LinkWidth::X4};
inline constexpr sim::Time kDefaultPropagation = sim::Time::ns(10);
inline constexpr uint16_t kMellanoxVendorId = 0x02c9;
inline constexpr uint16_t kSwitchDeviceId = 0xcf08;  // SwitchX-class
inline constexpr uint16_t kHcaDeviceId = 0x1017;     // ConnectX-5

class TopologyBuilder {
 public:
  uint32_t add_switch(std::string name, uint8_t ports);
  uint32_t add_hca(std::string name, uint8_t ports = 1);
  // Cables node a port pa to node b port pb at kDefaultRate.
  void cable(uint32_t a, uint8_t pa, uint32_t b, uint8_t pb);
  // Reserves room for `nodes` nodes (no effect on the result).
  void reserve(size_t nodes);

  Topology take() { return std::move(topo_); }

 private:
  uint32_t add(NodeKind kind, std::string name, uint8_t ports, uint16_t device);

  Topology topo_;
  GuidAllocator guids_;
};

}  // namespace ibfab::topo
