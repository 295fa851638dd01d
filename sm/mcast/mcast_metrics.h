#pragma once
// What the multicast manager reports for policy experiments.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "sim/latency_summary.h"
#include "sim/time.h"

namespace ibfab::sm {

// One MLID's tree as last computed.
struct McastTreeInfo {
  uint16_t mlid = 0;
  std::size_t members = 0;      // member ports attached to the switch graph
  bool routed = false;          // false: fewer than 2 members, or no root reaches them all
  uint32_t root = 0;            // switch index (in the Subnet of that computation)
  uint64_t root_guid = 0;
  unsigned depth = 0;           // most tree hops from the root to a member's edge switch
  std::size_t switches = 0;     // switches in the tree
  std::size_t links = 0;        // inter-switch links in the tree (switches - 1)
};

// One membership call (add/remove/clear/set_members, or reroute_all):
// when it came, how many MFT SMPs its batch sent, and when the last of them
// was answered.
struct McastProgramming {
  uint16_t mlid = 0;                    // 0 for reroute_all
  sim::Time called;
  std::optional<sim::Time> programmed;  // unset while SMPs are outstanding
  uint32_t smps = 0;
  uint32_t failed = 0;                  // answered with an error status, or never
  // Join latency to MFTs programmed (zero when nothing had to change).
  std::optional<sim::Time> latency() const {
    return programmed ? std::optional<sim::Time>(*programmed - called) : std::nullopt;
  }
};

// Every membership call the manager programmed, summed up in bounded
// memory: the report's figures (count, median and maximum latency) come
// from `latency`, a histogram at the printed precision (sim::LatencySummary);
// `recent` keeps the last kRecent records whole, oldest first.
struct McastProgrammingStats {
  static constexpr std::size_t kRecent = 64;
  uint64_t calls = 0;      // membership calls programmed (reroute_all excluded)
  uint64_t reroutes = 0;   // reroute_all calls programmed
  uint64_t batches = 0;    // flushes whose SMPs are all answered or given up
  uint64_t smps = 0, failed = 0;  // over those batches
  sim::LatencySummary latency;    // membership calls only, call to MFTs programmed
  // Ring of the last kRecent records (reroutes included), in the order
  // their batches finished; recent(i) for i < recent_size(), oldest first.
  std::size_t recent_size() const { return recent_count_ < kRecent ? recent_count_ : kRecent; }
  const McastProgramming& recent(std::size_t i) const {
    return ring_[(recent_count_ - recent_size() + i) % kRecent];
  }
  const McastProgramming& last() const { return recent(recent_size() - 1); }
  void record(const McastProgramming& p) { ring_[recent_count_++ % kRecent] = p; }

 private:
  McastProgramming ring_[kRecent];
  uint64_t recent_count_ = 0;
};

// Multicast load on the inter-switch links: how many trees use each cable.
struct McastLinkLoad {
  uint32_t max = 0;
  double mean = 0;              // over every inter-switch cable of the subnet, used or not
  std::size_t used = 0;         // cables in at least one tree
  std::size_t total = 0;        // inter-switch cables in the subnet
};

}  // namespace ibfab::sm
