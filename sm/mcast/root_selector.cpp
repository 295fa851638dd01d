#include "sm/mcast/root_selector.h"

#include <tuple>

namespace ibfab::sm {

std::string_view MinMaxHopRoot::description() const {
  return "OpenSM's root: fewest hops to the farthest member (the shallowest tree), first in switch order";
}

std::optional<uint32_t> MinMaxHopRoot::select(std::span<const uint8_t> cost, std::span<const uint32_t>) const {
  std::optional<uint32_t> best;
  for (uint32_t s = 0; s < cost.size(); ++s)
    if (cost[s] != kNoRoot && (!best || cost[s] < cost[*best])) best = s;
  return best;
}

std::string_view LeastLoadedRoot::description() const {
  return "spreads roots across groups: the switch in the fewest trees among those within 1 hop of the shallowest tree";
}

std::optional<uint32_t> LeastLoadedRoot::select(std::span<const uint8_t> cost,
                                                std::span<const uint32_t> trees_per_switch) const {
  const std::optional<uint32_t> shallowest = MinMaxHopRoot().select(cost, {});
  if (!shallowest) return std::nullopt;
  const unsigned limit = cost[*shallowest] + 1u;
  const auto load = [&](uint32_t s) { return s < trees_per_switch.size() ? trees_per_switch[s] : 0u; };
  uint32_t best = *shallowest;
  for (uint32_t s = 0; s < cost.size(); ++s)
    if (cost[s] != kNoRoot && cost[s] <= limit && std::tuple(load(s), cost[s]) < std::tuple(load(best), cost[best]))
      best = s;
  return best;
}

std::unique_ptr<RootSelector> make_root_selector(std::string_view name) {
  if (name == "min-max-hop") return std::make_unique<MinMaxHopRoot>();
  if (name == "least-loaded") return std::make_unique<LeastLoadedRoot>();
  return nullptr;
}

std::vector<std::string_view> root_selector_names() { return {"min-max-hop", "least-loaded"}; }

}  // namespace ibfab::sm
