#pragma once
// The description of a fabric: nodes (HCAs and switches) and the cables
// between their ports. Pure data, no simulation state.
//
// Invariants (every mutator checks them and throws TopologyError, leaving
// the Topology unchanged, when one would break):
//   - node names are non-empty, unique, and contain no '"' or control
//     characters (they are written quoted into net files and DOT);
//   - descriptions hold at most 64 bytes (the NodeDescription attribute)
//     with the same character rules;
//   - HCAs have 1 or 2 ports, switches 1..64 (switch port 0 is the
//     management port: it exists but is not counted and never cabled);
//   - every GUID identifies one node: node GUIDs and port GUIDs are non-zero
//     and no GUID of one node appears on another node;
//   - a port carries at most one link; a link joins two distinct ports.
//
// Memory: one NodeDesc per node plus one uint32_t per port (port 0
// included), one LinkDesc per link, and a name index.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fabric/model/link_rate.h"
#include "fabric/topology/topology_error.h"
#include "sim/time.h"

namespace ibfab::topo {

enum class NodeKind : uint8_t { Hca, Switch };

const char* to_string(NodeKind kind);

struct PortRef {
  uint32_t node = 0;  // index into Topology::nodes()
  uint8_t port = 0;
  friend bool operator==(const PortRef&, const PortRef&) = default;
};

inline constexpr uint8_t kMaxHcaPorts = 2;
inline constexpr uint8_t kMaxSwitchPorts = 64;
inline constexpr size_t kMaxDescriptionBytes = 64;

struct NodeDesc {
  NodeKind kind = NodeKind::Hca;
  std::string name;         // unique id, e.g. "H1", "S-0008f10400411f56"
  std::string description;  // NodeDescription; add_node() sets it to name when empty
  uint64_t node_guid = 0;
  uint64_t system_guid = 0;  // add_node() sets it to node_guid when zero
  uint8_t num_ports = 0;     // port 0 of a switch is not counted
  // Index = port number. Switches: exactly one entry, [0] = node_guid.
  // HCAs: num_ports + 1 entries, [0] unused (0). add_node() fills an empty
  // vector with node_guid (switch) or node_guid + port (HCA).
  std::vector<uint64_t> port_guids;
  uint16_t vendor_id = 0x02c9;
  uint16_t device_id = 0;

  friend bool operator==(const NodeDesc&, const NodeDesc&) = default;
};

struct LinkDesc {
  PortRef a, b;
  fabric::LinkRate rate;
  sim::Time propagation;
  friend bool operator==(const LinkDesc&, const LinkDesc&) = default;
};

class Topology {
 public:
  // Appends a node and returns its index. Throws TopologyError on a
  // duplicate name or GUID, a bad port count, or a malformed NodeDesc.
  // Amortised O(1 + ports). Strong guarantee.
  uint32_t add_node(NodeDesc node);

  // Cables port a to port b and returns the link index. Throws on an
  // unknown node, a port out of range (switch port 0 included), a port that
  // already carries a link, or a == b. O(1). Strong guarantee.
  uint32_t connect(PortRef a, PortRef b, fabric::LinkRate rate, sim::Time propagation);

  // Capacity hint for `nodes` nodes; no observable effect.
  void reserve(size_t nodes);

  const std::vector<NodeDesc>& nodes() const { return nodes_; }
  const std::vector<LinkDesc>& links() const { return links_; }

  // O(1) average.
  std::optional<uint32_t> find(std::string_view name) const;
  // The link on a port; nullopt for a free or non-existent port. O(1).
  std::optional<uint32_t> link_at(PortRef port) const;
  // The port at the other end of the link on `port`. O(1).
  std::optional<PortRef> peer(PortRef port) const;

  size_t hca_count() const { return nodes_.size() - switches_; }
  size_t switch_count() const { return switches_; }

  // "H1[1]": for messages.
  std::string port_name(PortRef port) const;

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  static constexpr uint32_t kNoLink = UINT32_MAX;

  // Index into port_link_ of `port`, or nullopt when out of range.
  std::optional<size_t> slot(PortRef port) const;
  void check_port(PortRef port, const char* end) const;

  std::vector<NodeDesc> nodes_;
  std::vector<LinkDesc> links_;
  std::vector<uint32_t> port_base_;  // per node: first slot in port_link_ (port 0)
  std::vector<uint32_t> port_link_;  // per port: link index or kNoLink
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> by_name_;
  std::unordered_map<uint64_t, uint32_t> guid_owner_;  // every node and port GUID
  size_t switches_ = 0;
};

}  // namespace ibfab::topo
