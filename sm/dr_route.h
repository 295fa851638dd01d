#pragma once
// A directed route from the SM's port: the egress port of each hop, first
// hop first (up to mad::dr_smp::kMaxHops of them), held inline so that
// storing or copying one allocates nothing.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "fabric/mad/dr_smp.h"

namespace ibfab::sm {

struct DrRoute {
  uint8_t hops = 0;
  std::array<uint8_t, mad::dr_smp::kMaxHops> port{};

  DrRoute() = default;
  // The first kMaxHops entries of `path`.
  explicit DrRoute(std::span<const uint8_t> path)
      : hops(static_cast<uint8_t>(std::min<std::size_t>(path.size(), mad::dr_smp::kMaxHops))) {
    std::copy_n(path.begin(), hops, port.begin());
  }
  // The route a DR SMP was sent on, read from the SMP or its answer (256
  // bytes): InitialPath[1 .. HopCount].
  static DrRoute of_smp(std::span<const uint8_t> smp) {
    const mad::ConstSmpBuffer s(smp.data(), mad::dr_smp::kSize);
    const std::size_t hops = std::min<std::size_t>(mad::dr_smp::hop_count(s), mad::dr_smp::kMaxHops);
    return DrRoute(s.subspan(mad::dr_smp::kInitialPathOffset + 1, hops));
  }

  std::span<const uint8_t> span() const { return {port.data(), hops}; }
};

}  // namespace ibfab::sm
