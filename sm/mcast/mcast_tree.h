#pragma once
// A multicast spanning tree over the switch graph (RoutingInput indices),
// as a tree builder produces it and the multicast manager programs it.
#include <cstdint>
#include <vector>

namespace ibfab::sm {

// Where a member port meets the switch graph.
struct McastEdge {
  uint32_t sw = 0;          // RoutingInput::switches index of its edge switch
  uint8_t port = 0;         // the edge switch's port facing the member (0: the switch itself)
  bool is_switch = false;   // the member is that switch's port 0 (no extra hop to reach it)
};

// Invariants (every builder guarantees them): nodes[0] is the root; every
// other node's parent appears before it; each switch appears at most once;
// up_port / down_port are the two ends of one cable between the node and
// its parent; depth = parent's depth + 1. So the edges form a tree and a
// flood along them (never back out of the ingress port) has no loop.
struct McastTree {
  struct Node {
    uint32_t sw = 0;         // switch index
    uint32_t parent = 0;     // the parent's switch index (== sw for the root)
    uint8_t up_port = 0;     // sw's port towards the parent (0 for the root)
    uint8_t down_port = 0;   // the parent's port towards sw (0 for the root)
    uint8_t depth = 0;       // switch hops from the root
  };
  std::vector<Node> nodes;

  uint32_t root() const { return nodes.front().sw; }
  // The node of switch `sw`, or nullptr. O(nodes).
  const Node* find(uint32_t sw) const {
    for (const Node& n : nodes)
      if (n.sw == sw) return &n;
    return nullptr;
  }
};

}  // namespace ibfab::sm
