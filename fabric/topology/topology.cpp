#include "fabric/topology/topology.h"

#include <cstdio>

namespace ibfab::topo {
namespace {

std::string hex_guid(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

// True when `text` can be written between double quotes on one line.
bool quotable(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace

const char* to_string(NodeKind kind) { return kind == NodeKind::Switch ? "switch" : "HCA"; }

uint32_t Topology::add_node(NodeDesc node) {
  if (node.name.empty()) throw TopologyError("node name is empty");
  if (!quotable(node.name))
    throw TopologyError("node name '" + node.name + "' contains '\"' or a control character");
  const std::string& n = node.name;
  if (by_name_.find(n) != by_name_.end()) throw TopologyError("duplicate node name '" + n + "'");

  const bool sw = node.kind == NodeKind::Switch;
  const unsigned max_ports = sw ? kMaxSwitchPorts : kMaxHcaPorts;
  if (node.num_ports == 0) throw TopologyError(std::string(to_string(node.kind)) + " '" + n + "' has 0 ports");
  if (node.num_ports > max_ports)
    throw TopologyError(std::string(to_string(node.kind)) + " '" + n + "' has " +
                        std::to_string(node.num_ports) + " ports (at most " +
                        std::to_string(max_ports) + ")");

  if (node.description.empty()) node.description = node.name;
  if (!quotable(node.description))
    throw TopologyError("description of '" + n + "' contains '\"' or a control character");
  if (node.description.size() > kMaxDescriptionBytes)
    throw TopologyError("description of '" + n + "' is longer than 64 bytes");

  if (node.node_guid == 0) throw TopologyError("node '" + n + "' has a zero node GUID");
  if (node.system_guid == 0) node.system_guid = node.node_guid;
  if (node.port_guids.empty()) {
    if (sw) {
      node.port_guids = {node.node_guid};
    } else {
      node.port_guids.assign(node.num_ports + 1u, 0);
      for (unsigned p = 1; p <= node.num_ports; ++p) node.port_guids[p] = node.node_guid + p;
    }
  }
  if (sw && (node.port_guids.size() != 1 || node.port_guids[0] != node.node_guid))
    throw TopologyError("switch '" + n + "' must have exactly one port GUID, equal to its node GUID");
  if (!sw && node.port_guids.size() != node.num_ports + 1u)
    throw TopologyError("HCA '" + n + "' needs " + std::to_string(node.num_ports + 1) +
                        " port GUID entries (index = port number)");

  // The node's GUIDs, each once: node GUID, then its port GUIDs.
  std::vector<uint64_t> guids{node.node_guid};
  for (size_t p = sw ? 0 : 1; p < node.port_guids.size(); ++p) {
    const uint64_t g = node.port_guids[p];
    if (g == 0) throw TopologyError("port " + std::to_string(p) + " of '" + n + "' has a zero GUID");
    for (size_t q = sw ? 0 : 1; q < p; ++q)
      if (node.port_guids[q] == g)
        throw TopologyError("ports " + std::to_string(q) + " and " + std::to_string(p) + " of '" +
                            n + "' share GUID " + hex_guid(g));
    if (g != node.node_guid) guids.push_back(g);
  }
  for (uint64_t g : guids) {
    const auto it = guid_owner_.find(g);
    if (it != guid_owner_.end())
      throw TopologyError("duplicate GUID " + hex_guid(g) + ": '" + n + "' and '" +
                          nodes_[it->second].name + "'");
  }

  // Commit. Each step either succeeds or is undone, so a throw (bad_alloc)
  // leaves the Topology as it was.
  const auto index = static_cast<uint32_t>(nodes_.size());
  const size_t ports_before = port_link_.size();
  size_t guids_added = 0;
  bool named = false;
  try {
    nodes_.reserve(nodes_.size() + 1);
    port_base_.reserve(port_base_.size() + 1);
    port_link_.insert(port_link_.end(), node.num_ports + 1u, kNoLink);
    by_name_.emplace(node.name, index);
    named = true;
    for (uint64_t g : guids) {
      guid_owner_.emplace(g, index);
      ++guids_added;
    }
  } catch (...) {
    for (size_t i = 0; i < guids_added; ++i) guid_owner_.erase(guids[i]);
    if (named) by_name_.erase(node.name);
    port_link_.resize(ports_before);
    throw;
  }
  port_base_.push_back(static_cast<uint32_t>(ports_before));  // capacity reserved
  if (sw) ++switches_;
  nodes_.push_back(std::move(node));  // capacity reserved: no throw
  return index;
}

void Topology::reserve(size_t nodes) {
  nodes_.reserve(nodes);
  port_base_.reserve(nodes);
  by_name_.reserve(nodes);
  guid_owner_.reserve(nodes * 2);
}

std::optional<size_t> Topology::slot(PortRef port) const {
  if (port.node >= nodes_.size() || port.port > nodes_[port.node].num_ports) return std::nullopt;
  return size_t{port_base_[port.node]} + port.port;
}

std::string Topology::port_name(PortRef port) const {
  const std::string node = port.node < nodes_.size() ? nodes_[port.node].name
                                                     : "#" + std::to_string(port.node);
  return node + "[" + std::to_string(port.port) + "]";
}

void Topology::check_port(PortRef port, const char* end) const {
  if (port.node >= nodes_.size())
    throw TopologyError(std::string("connect: end ") + end + " names node #" +
                        std::to_string(port.node) + ", which does not exist");
  const NodeDesc& n = nodes_[port.node];
  if (port.port < 1 || port.port > n.num_ports)
    throw TopologyError("port " + std::to_string(port.port) + " of '" + n.name +
                        "' is out of range (1.." + std::to_string(n.num_ports) + ")");
  const uint32_t link = port_link_[port_base_[port.node] + port.port];
  if (link != kNoLink) {
    const LinkDesc& l = links_[link];
    const PortRef other = l.a == port ? l.b : l.a;
    throw TopologyError("port " + port_name(port) + " is already connected to " + port_name(other));
  }
}

uint32_t Topology::connect(PortRef a, PortRef b, fabric::LinkRate rate, sim::Time propagation) {
  check_port(a, "a");
  check_port(b, "b");
  if (a == b) throw TopologyError("cannot connect port " + port_name(a) + " to itself");
  const auto index = static_cast<uint32_t>(links_.size());
  links_.push_back(LinkDesc{a, b, rate, propagation});
  port_link_[port_base_[a.node] + a.port] = index;
  port_link_[port_base_[b.node] + b.port] = index;
  return index;
}

std::optional<uint32_t> Topology::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> Topology::link_at(PortRef port) const {
  const auto s = slot(port);
  if (!s || port_link_[*s] == kNoLink) return std::nullopt;
  return port_link_[*s];
}

std::optional<PortRef> Topology::peer(PortRef port) const {
  const auto link = link_at(port);
  if (!link) return std::nullopt;
  const LinkDesc& l = links_[*link];
  return l.a == port ? l.b : l.a;
}

}  // namespace ibfab::topo
