#pragma once
// Test helper: configures a fabric directly, as if an SM had run: LIDs in
// node order (HCA ports, switch port 0), every cabled port Active, and
// min-hop LFTs computed by breadth-first search. For tests of forwarding
// and the data path only; the SM itself reaches the fabric through MADs.
#include <deque>
#include <map>
#include <vector>

#include "fabric/model/fabric.h"

namespace ibfab::fabric::testing {

// Returns the LID given to each node (switch: port 0; HCA: port 1).
inline std::vector<uint16_t> configure_by_hand(Fabric& f) {
  std::vector<uint16_t> lid(f.node_count(), 0);
  uint16_t next = 1;
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    Node& n = f.node(i);
    if (n.is_switch()) {
      n.port(0).lid = lid[i] = next++;
      n.port(0).set_state(PortState::Active);
    } else {
      for (uint8_t p = 1; p <= n.num_ports(); ++p) n.port(p).lid = next++;
      lid[i] = n.port(1).lid;
    }
    for (uint8_t p = 1; p <= n.num_ports(); ++p)
      if (n.port(p).link()) n.port(p).set_state(PortState::Active);
  }
  // For every destination port, BFS outwards over switches; each switch
  // routes the destination LID to the port it was reached from.
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    Node& dst = f.node(i);
    std::vector<std::pair<uint16_t, Port*>> targets;  // LID, the port owning it
    if (dst.is_switch()) targets.emplace_back(dst.port(0).lid, nullptr);
    else
      for (uint8_t p = 1; p <= dst.num_ports(); ++p) targets.emplace_back(dst.port(p).lid, &dst.port(p));
    for (auto [target_lid, owner] : targets) {
      std::vector<bool> seen(f.node_count(), false);
      std::deque<Node*> q;
      if (dst.is_switch()) {
        static_cast<Switch&>(dst).set_lft(target_lid, 0);
        seen[i] = true;
        q.push_back(&dst);
      } else if (Port* up = owner->peer()) {
        auto& sw = static_cast<Switch&>(up->node());
        sw.set_lft(target_lid, up->number());
        seen[sw.index()] = true;
        q.push_back(&sw);
      }
      while (!q.empty()) {
        Node* n = q.front();
        q.pop_front();
        for (uint8_t p = 1; p <= n->num_ports(); ++p) {
          Port* peer = n->port(p).peer();
          if (!peer || !peer->node().is_switch() || seen[peer->node().index()]) continue;
          seen[peer->node().index()] = true;
          static_cast<Switch&>(peer->node()).set_lft(target_lid, peer->number());
          q.push_back(&peer->node());
        }
      }
    }
  }
  return lid;
}

}  // namespace ibfab::fabric::testing
