#include "sm/mcast/root_selector.h"

#include <algorithm>
#include <vector>
#include <tuple>

namespace ibfab::sm {

uint32_t max_member_hops(const RootQuery& q, uint32_t candidate) {
  const std::size_t n = q.graph.switches.size();
  if (candidate >= n || q.routes.hops.size() != n * n) return kNoRoot;
  uint32_t worst = 0;
  for (const McastEdge& m : q.members) {
    if (m.sw >= n) return kNoRoot;
    const uint8_t h = q.routes.switch_hops(candidate, m.sw, n);
    if (h == kUnreachable) return kNoRoot;
    worst = std::max(worst, uint32_t{h} + (m.is_switch ? 0u : 1u));
  }
  return worst;
}

std::string_view MinMaxHopRoot::description() const {
  return "OpenSM's root: fewest hops to the farthest member (the shallowest tree), first in switch order";
}

std::optional<uint32_t> MinMaxHopRoot::select(const RootQuery& q) const {
  const auto n = static_cast<uint32_t>(q.graph.switches.size());
  if (q.routes.hops.size() != std::size_t{n} * n) return std::nullopt;
  // Members that hang off the same edge switch cost the same: keep each
  // edge switch once, with +1 if any of its members is a CA port. A large
  // group on a fat tree has a few hundred edge switches, not thousands.
  std::vector<uint8_t> extra(n, 0xFF);
  std::vector<uint32_t> edges;
  for (const McastEdge& m : q.members) {
    if (m.sw >= n) return std::nullopt;
    const uint8_t e = m.is_switch ? 0 : 1;
    if (extra[m.sw] == 0xFF) edges.push_back(m.sw);
    if (extra[m.sw] == 0xFF || e > extra[m.sw]) extra[m.sw] = e;
  }
  std::optional<uint32_t> best;
  uint32_t best_cost = kNoRoot;
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t worst = 0;
    for (uint32_t sw : edges) {
      const uint8_t h = q.routes.switch_hops(s, sw, n);
      worst = h == kUnreachable ? kNoRoot : std::max(worst, uint32_t{h} + extra[sw]);
      if (worst >= best_cost) break;  // cannot win: the first minimum is kept
    }
    if (worst < best_cost) {
      best_cost = worst;
      best = s;
    }
  }
  return best;
}

std::string_view LeastLoadedRoot::description() const {
  return "spreads roots across groups: the switch in the fewest trees among those within 1 hop of the shallowest tree";
}

std::optional<uint32_t> LeastLoadedRoot::select(const RootQuery& q) const {
  const auto n = static_cast<uint32_t>(q.graph.switches.size());
  std::vector<uint32_t> cost(n);
  uint32_t min_cost = kNoRoot;
  for (uint32_t s = 0; s < n; ++s) {
    cost[s] = max_member_hops(q, s);
    min_cost = std::min(min_cost, cost[s]);
  }
  if (min_cost == kNoRoot) return std::nullopt;
  const auto load = [&q](uint32_t s) { return s < q.trees_per_switch.size() ? q.trees_per_switch[s] : 0u; };
  std::optional<uint32_t> best;
  for (uint32_t s = 0; s < n; ++s) {
    if (cost[s] > min_cost + 1) continue;  // kNoRoot too
    if (!best || std::tuple(load(s), cost[s]) < std::tuple(load(*best), cost[*best])) best = s;
  }
  return best;
}

std::unique_ptr<RootSelector> make_root_selector(std::string_view name) {
  if (name == "min-max-hop") return std::make_unique<MinMaxHopRoot>();
  if (name == "least-loaded") return std::make_unique<LeastLoadedRoot>();
  return nullptr;
}

std::vector<std::string_view> root_selector_names() { return {"min-max-hop", "least-loaded"}; }

}  // namespace ibfab::sm
