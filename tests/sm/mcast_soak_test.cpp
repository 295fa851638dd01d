// Soak: thousands of join/leave cycles through the SA of a real SM (MADs on
// the fabric), with OpenSM's MLID-leak pattern (join 0x9, leave 0x1) among
// them. What the SA and the multicast manager hold must come back to its
// level after the first cycles: counts of what they keep, and the bytes
// the process has in use (mallinfo2), which a per-change record would grow.
#include <gtest/gtest.h>
#include <malloc.h>

#include <array>
#include <cstdint>
#include <optional>

#include "fabric/mad/sa/mcmember_record.h"
#include "sm/mcast/mcast_manager.h"
#include "sm/sa/mcast_groups.h"
#include "tests/sm/sa_on_fabric.h"

namespace ibfab::sm {
namespace {

using testing::Mad;
namespace method = wire::mad_method;
namespace comp = mad::mcm_comp;

class McastSoak : public testing::SaOnFabric {
 protected:
  void SetUp() override {
    SaOnFabric::SetUp();
    for (int i = 0; i < 2; ++i) hosts[i].emplace(fabric, h(3 + i), sm.own_lid());
  }

  static wire::Gid mgid(unsigned n) {
    wire::Gid g;
    g.raw[0] = 0xFF;
    g.raw[1] = 0x15;
    g.raw[15] = static_cast<uint8_t>(n);
    return g;
  }
  mad::McMemberRecord member(const wire::Gid& group, int host, uint8_t js) const {
    mad::McMemberRecord r;
    r.mgid = group;
    r.port_gid = wire::Gid::from(h(host).port(1).gid_prefix, h(host).port(1).guid());
    r.q_key = 0x11111111;
    r.p_key = 0xFFFF;
    r.join_state = js;
    return r;
  }
  // One SA request from host 3 or 4 (index 0 or 1); the answer's status.
  uint16_t ask(int who, uint8_t m, uint64_t mask, const mad::McMemberRecord& r) {
    testing::SaClient& c = *hosts[who];
    c.received.clear();  // keeps its capacity: the client does not grow either
    c.sources.clear();
    const std::optional<Mad> a = c.request(testing::SaClient::make(m, mask, r));
    EXPECT_TRUE(a.has_value());
    return a ? mad::sa_status(mad::ConstSaBuffer(a->data(), a->size())) : 0xFFFF;
  }
  // H3 creates a group, H4 joins it as 0x9 and leaves 0x1 (OpenSM's MLID
  // leak), then 0x8, then H3 leaves: the group and its MLID go.
  void cycle(unsigned n) {
    const wire::Gid g = mgid(n % 8);
    EXPECT_EQ(ask(0, method::kSet, comp::kCreateRequiredMask, member(g, 3, 0x1)), 0);
    EXPECT_EQ(ask(1, method::kSet, comp::kCreateRequiredMask, member(g, 4, 0x9)), 0);
    EXPECT_EQ(ask(1, method::kDelete, comp::kJoinRequiredMask, member(g, 4, 0x1)), 0);
    EXPECT_EQ(ask(1, method::kDelete, comp::kJoinRequiredMask, member(g, 4, 0x8)), 0);
    EXPECT_EQ(ask(0, method::kDelete, comp::kJoinRequiredMask, member(g, 3, 0x1)), 0);
    sim.run();  // the MFT SMPs of the last change
  }

  std::array<std::optional<testing::SaClient>, 2> hosts;
};

TEST_F(McastSoak, WhatTheSaAndTheManagerHoldReturnsToItsLevel) {
  for (unsigned i = 0; i < 100; ++i) cycle(i);
  const McastManager::Footprint before = sm.mcast()->footprint();
  const std::size_t groups_before = sm.groups()->groups().size();
  const uint64_t calls_before = sm.mcast()->programming().calls;
  for (unsigned i = 100; i < 2100; ++i) cycle(i);
  const McastManager::Footprint after = sm.mcast()->footprint();
  EXPECT_EQ(sm.groups()->groups().size(), groups_before);  // the IPoIB broadcast group alone
  EXPECT_EQ(after.groups, before.groups);
  EXPECT_EQ(after.members, before.members);
  EXPECT_EQ(after.tree_nodes, before.tree_nodes);
  EXPECT_EQ(after.ports_in_groups, before.ports_in_groups);
  EXPECT_EQ(after.batch_slots, before.batch_slots);
  EXPECT_EQ(after.calls_waiting, 0u);
  EXPECT_LE(after.latency_bins, 64u);
  // Every change was still counted and timed.
  const McastProgrammingStats& p = sm.mcast()->programming();
  EXPECT_GE(p.calls - calls_before, 2000u * 3);
  EXPECT_EQ(p.latency.count(), p.calls);
  EXPECT_EQ(p.recent_size(), McastProgrammingStats::kRecent);
}

// Bytes malloc has handed out and not had back: small chunks and mmapped ones.
std::size_t bytes_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

TEST_F(McastSoak, BytesInUseStayFlatOverTwoThousandCycles) {
  for (unsigned i = 0; i < 200; ++i) cycle(i);
  const std::size_t before = bytes_in_use();
  for (unsigned i = 200; i < 2200; ++i) cycle(i);
  const std::size_t after = bytes_in_use();
  // A record kept per membership change grew this by 1.1 MB. Allow 16 KB
  // for the allocator's own bookkeeping.
  EXPECT_LT(after, before + 16 * 1024) << "grew by " << after - before << " bytes";
}

}  // namespace
}  // namespace ibfab::sm
