#include "sm/mcast/root_cost.h"

namespace ibfab::sm {

uint8_t RootCost::value(uint32_t candidate, uint32_t edge, uint8_t extra) const {
  const uint8_t h = routes_->switch_hops(candidate, edge, cost_.size());
  return h == kUnreachable || h + extra >= kNoRoot ? kNoRoot : static_cast<uint8_t>(h + extra);
}

void RootCost::fold(uint32_t candidate, uint8_t v) {
  if (v > cost_[candidate] || at_cost_[candidate] == 0) {
    cost_[candidate] = v;
    at_cost_[candidate] = 1;
  } else if (v == cost_[candidate]) {
    ++at_cost_[candidate];
  }
}

void RootCost::add(uint32_t edge, uint8_t extra) {
  for (uint32_t s = 0; s < cost_.size(); ++s) fold(s, value(s, edge, extra));
}

void RootCost::remove(uint32_t edge, uint8_t extra, const EdgeMap& remaining) {
  for (uint32_t s = 0; s < cost_.size(); ++s) {
    if (value(s, edge, extra) != cost_[s] || --at_cost_[s] > 0) continue;
    cost_[s] = 0;
    for (const auto& [e, m] : remaining)
      if (e != edge) fold(s, value(s, e, m.extra()));
  }
}

std::vector<uint8_t> root_costs(const RoutingOutput& routes, std::size_t n, std::span<const McastEdge> members) {
  EdgeMap edges;
  for (const McastEdge& m : members) {
    EdgeMembers& e = edges[m.sw];
    if (m.is_switch) e.self = true;
    else ++e.ca;
  }
  RootCost cost(routes, n);
  for (const auto& [sw, m] : edges) cost.add(sw, m.extra());
  return {cost.costs().begin(), cost.costs().end()};
}

}  // namespace ibfab::sm
