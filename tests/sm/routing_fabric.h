#pragma once
// Test fabrics for the routing engines: a generated topology turned into a
// RoutingInput, with LIDs assigned in node order (each switch one LID,
// LMC 0; each HCA port 2^lmc LIDs, aligned), and helpers that follow the
// resulting forwarding tables hop by hop.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/topology/topology.h"
#include "fabric/topology/topology_spec.h"
#include "sm/routing/routing_engine.h"

namespace ibfab::sm::testing {

struct EndPort {
  uint32_t sw = 0;   // edge switch (index into switches)
  uint8_t port = 0;  // its port cabled to the end port
  uint16_t lid = 0;  // base LID
  uint8_t lmc = 0;
};

struct TestFabric {
  topo::Topology topo;
  RoutingInput in;
  std::vector<uint32_t> node_of_switch;  // switch index -> node index
  std::vector<EndPort> end_ports;

  uint32_t n() const { return static_cast<uint32_t>(in.switches.size()); }
  // The switch index of node `name`; throws if it is not a switch.
  uint32_t switch_named(const std::string& name) const {
    const std::optional<uint32_t> node = topo.find(name);
    for (uint32_t s = 0; node && s < node_of_switch.size(); ++s)
      if (node_of_switch[s] == *node) return s;
    throw std::invalid_argument("no switch " + name);
  }
  // Cuts the cable on port `port` of switch `s` (both ends).
  void cut(uint32_t s, uint8_t port) {
    RoutingSwitch::Peer& near = in.switches[s].ports[port];
    in.switches[near.sw].ports[near.port] = {};
    near = {};
  }
};

inline TestFabric from_topology(topo::Topology t, uint8_t hca_lmc = 0) {
  TestFabric f;
  f.topo = std::move(t);
  const auto& nodes = f.topo.nodes();
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> switch_of(nodes.size(), kNone);
  std::vector<std::vector<uint16_t>> lid_of(nodes.size());  // per node, per port
  uint32_t next = 1;
  const uint32_t span = 1u << hca_lmc;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    lid_of[i].assign(nodes[i].num_ports + 1u, 0);
    if (nodes[i].kind == topo::NodeKind::Switch) {
      switch_of[i] = static_cast<uint32_t>(f.node_of_switch.size());
      f.node_of_switch.push_back(i);
      lid_of[i][0] = static_cast<uint16_t>(next++);
    } else {
      for (uint32_t p = 1; p <= nodes[i].num_ports; ++p) {
        next = (next + span - 1) / span * span;
        lid_of[i][p] = static_cast<uint16_t>(next);
        next += span;
      }
    }
  }
  if (next - 1 > 0xBFFF) throw std::invalid_argument("too many LIDs");
  f.in.max_lid = static_cast<uint16_t>(next - 1);
  for (uint32_t node : f.node_of_switch) {
    RoutingSwitch sw;
    sw.guid = nodes[node].node_guid;
    sw.lid = lid_of[node][0];
    sw.num_ports = nodes[node].num_ports;
    sw.ports.resize(sw.num_ports + 1u);
    for (uint32_t p = 1; p <= sw.num_ports; ++p) {
      const auto peer = f.topo.peer({node, static_cast<uint8_t>(p)});
      if (!peer) continue;
      RoutingSwitch::Peer& out = sw.ports[p];
      out.port = peer->port;
      if (switch_of[peer->node] != kNone) {
        out.kind = RoutingSwitch::Peer::Kind::Switch;
        out.sw = switch_of[peer->node];
      } else {
        out.kind = RoutingSwitch::Peer::Kind::Endport;
        out.lid = lid_of[peer->node][peer->port];
        out.lmc = hca_lmc;
        f.end_ports.push_back({static_cast<uint32_t>(f.in.switches.size()), static_cast<uint8_t>(p),
                               out.lid, hca_lmc});
      }
    }
    f.in.switches.push_back(std::move(sw));
  }
  return f;
}

inline TestFabric make_fabric(const std::string& spec, uint8_t hca_lmc = 0) {
  return from_topology(topo::load_topology(spec), hca_lmc);
}

// One step of a route: the switch and the port it forwards out of.
struct Step {
  uint32_t sw = 0;
  uint8_t port = 0;
  friend bool operator==(const Step&, const Step&) = default;
};

struct Walk {
  bool arrived = false;
  std::string failure;      // why not, when !arrived
  std::vector<Step> steps;  // every switch visited, with its egress port
  // Switch-to-switch hops taken.
  std::size_t hops() const { return steps.empty() ? 0 : steps.size() - 1; }
};

// Follows the tables from switch `from` for `lid` until it leaves the
// fabric at the port that owns `lid` (or at a switch's port 0), is
// dropped, reaches the wrong place, or has visited more than n switches.
inline Walk walk(const RoutingInput& in, const RoutingOutput& out, uint32_t from, uint16_t lid) {
  Walk w;
  uint32_t s = from;
  const auto owns = [lid](uint16_t base, uint8_t lmc) {
    return base != 0 && lid >= base && lid < base + (1u << lmc);
  };
  for (std::size_t visited = 0; visited <= in.switches.size(); ++visited) {
    const uint8_t port = out.lft[s][lid];
    w.steps.push_back({s, port});
    const RoutingSwitch& sw = in.switches[s];
    if (port == kNoRoute) {
      w.failure = "dropped at switch " + std::to_string(s);
      return w;
    }
    if (port == 0) {
      w.arrived = owns(sw.lid, sw.lmc);
      if (!w.arrived) w.failure = "port 0 of the wrong switch " + std::to_string(s);
      return w;
    }
    if (port >= sw.ports.size()) {
      w.failure = "port beyond the switch";
      return w;
    }
    const RoutingSwitch::Peer& peer = sw.ports[port];
    switch (peer.kind) {
      case RoutingSwitch::Peer::Kind::None:
        w.failure = "uncabled port " + std::to_string(port) + " of switch " + std::to_string(s);
        return w;
      case RoutingSwitch::Peer::Kind::Endport:
        w.arrived = owns(peer.lid, peer.lmc);
        if (!w.arrived) w.failure = "wrong end port at switch " + std::to_string(s);
        return w;
      case RoutingSwitch::Peer::Kind::Switch:
        s = peer.sw;
        break;
    }
  }
  w.failure = "loop";
  return w;
}

// Hops between switches by BFS over the input (kUnreachable if none).
inline std::vector<uint32_t> bfs_hops(const RoutingInput& in, uint32_t from) {
  std::vector<uint32_t> dist(in.switches.size(), UINT32_MAX);
  std::vector<uint32_t> queue{from};
  dist[from] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    for (const RoutingSwitch::Peer& p : in.switches[u].ports) {
      if (p.kind == RoutingSwitch::Peer::Kind::Switch && dist[p.sw] == UINT32_MAX) {
        dist[p.sw] = dist[u] + 1;
        queue.push_back(p.sw);
      }
    }
  }
  return dist;
}

}  // namespace ibfab::sm::testing
