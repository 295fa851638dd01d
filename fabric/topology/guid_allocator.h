#pragma once
// Deterministic GUIDs for nodes that come without one (generators, net
// files without guid lines).
//
// Layout: Mellanox OUI 0x0002c9 in bits 63..40, a kind tag in bits 39..32
// (0x01 switch, 0x02 HCA), a sequence in bits 31..0 starting at 1. A switch
// consumes one GUID (port 0 shares it); an HCA with P ports consumes P + 1
// (node GUID g, port p = g + p), the way ibsim hands them out. set_next()
// moves a kind's sequence, as ibsim's "switchguid=" / "caguid=" lines do.
#include <cstdint>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

class GuidAllocator {
 public:
  static constexpr uint64_t kSwitchBase = 0x0002c90100000000ull;
  static constexpr uint64_t kHcaBase = 0x0002c90200000000ull;

  // The node GUID for the next node of `kind`; advances the sequence.
  uint64_t next(NodeKind kind, uint8_t num_ports) {
    uint64_t& n = slot(kind);
    const uint64_t guid = n;
    n += kind == NodeKind::Switch ? 1u : num_ports + 1u;
    return guid;
  }
  void set_next(NodeKind kind, uint64_t guid) { slot(kind) = guid; }
  uint64_t peek(NodeKind kind) const { return kind == NodeKind::Switch ? switch_ : hca_; }

 private:
  uint64_t& slot(NodeKind kind) { return kind == NodeKind::Switch ? switch_ : hca_; }

  uint64_t switch_ = kSwitchBase + 1;
  uint64_t hca_ = kHcaBase + 1;
};

}  // namespace ibfab::topo
