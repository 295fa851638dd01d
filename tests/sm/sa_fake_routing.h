#pragma once
// Test helper: a McastRouting that records every call and allocates MLIDs
// lowest-free from 0xC000 up to 0xC000 + cap - 1 (a requested MLID is
// honoured when it is in range and free).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sm/sa/mcast_routing.h"

namespace ibfab::sm::testing {

class FakeRouting : public McastRouting {
 public:
  explicit FakeRouting(uint16_t cap) : cap_(cap) {}

  std::optional<uint16_t> allocate_mlid(std::optional<uint16_t> requested) override {
    ++allocations;
    const uint32_t last = 0xC000u + cap_ - 1u;
    if (requested && *requested >= 0xC000 && *requested <= last && !taken.count(*requested)) {
      taken.insert(*requested);
      return requested;
    }
    for (uint32_t m = 0xC000; m <= last && m <= 0xFFFE; ++m) {
      if (taken.insert(static_cast<uint16_t>(m)).second) return static_cast<uint16_t>(m);
    }
    return std::nullopt;
  }
  void free_mlid(uint16_t mlid) override {
    freed.push_back(mlid);
    taken.erase(mlid);
  }
  bool admit(uint32_t port_index, uint16_t mlid) override {
    admits.emplace_back(port_index, mlid);
    return !refuse.count(port_index);
  }
  void add_member(uint16_t mlid, uint64_t port_guid) override {
    members[mlid].insert(port_guid);
    ++changes;
  }
  void remove_member(uint16_t mlid, uint64_t port_guid) override {
    members[mlid].erase(port_guid);
    ++changes;
  }
  void clear_members(uint16_t mlid) override {
    members[mlid].clear();
    ++changes;
  }

  // State a failed request must not change.
  struct State {
    std::set<uint16_t> taken;
    std::map<uint16_t, std::set<uint64_t>> members;
    std::size_t changes = 0;
    friend bool operator==(const State&, const State&) = default;
  };
  State state() const { return {taken, members, changes}; }

  std::set<uint16_t> taken;
  std::vector<uint16_t> freed;
  std::vector<std::pair<uint32_t, uint16_t>> admits;
  std::map<uint16_t, std::set<uint64_t>> members;  // port GUIDs per MLID
  std::size_t changes = 0;                         // membership calls
  std::set<uint32_t> refuse;                          // ports admit() refuses
  uint64_t allocations = 0;

 private:
  uint16_t cap_;
};

}  // namespace ibfab::sm::testing
