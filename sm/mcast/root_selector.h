#pragma once
// Multicast root selection: which switch a group's spanning tree grows
// from. Chosen by name ("min-max-hop", "least-loaded"); each documents in
// one line what it optimises.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sm/mcast/root_cost.h"

namespace ibfab::sm {

class RootSelector {
 public:
  virtual ~RootSelector() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // A switch index whose cost (root_cost.h: one per switch) is not
  // kNoRoot, or nullopt if there is none. trees_per_switch: per switch
  // index, how many other multicast trees it is part of now (empty = all
  // 0). Deterministic: same arguments, same answer. O(switches).
  virtual std::optional<uint32_t> select(std::span<const uint8_t> cost,
                                         std::span<const uint32_t> trees_per_switch) const = 0;
};

// "min-max-hop" (OpenSM): the lowest cost; the lowest switch index among
// equals.
class MinMaxHopRoot final : public RootSelector {
 public:
  std::string_view name() const override { return "min-max-hop"; }
  std::string_view description() const override;
  std::optional<uint32_t> select(std::span<const uint8_t> cost,
                                 std::span<const uint32_t> trees_per_switch) const override;
};

// "least-loaded": among switches whose cost is at most one more than the
// minimum, the one in the fewest trees; ties go to the lower cost, then the
// lower index.
class LeastLoadedRoot final : public RootSelector {
 public:
  std::string_view name() const override { return "least-loaded"; }
  std::string_view description() const override;
  std::optional<uint32_t> select(std::span<const uint8_t> cost,
                                 std::span<const uint32_t> trees_per_switch) const override;
};

// nullptr for an unknown name.
std::unique_ptr<RootSelector> make_root_selector(std::string_view name);
std::vector<std::string_view> root_selector_names();

}  // namespace ibfab::sm
