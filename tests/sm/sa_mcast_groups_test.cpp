// MCMemberRecord rules of SA-MULTICAST.md section 3 on McastGroups, one
// test per rule: each failing case checks the exact SA status and that
// neither the group table nor the multicast routing changed.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "fabric/wire/mad_header.h"
#include "sm/sa/mcast_groups.h"
#include "tests/sm/sa_fake_routing.h"
#include "tests/sm/sa_test_subnet.h"

namespace ibfab::sm {
namespace {

using mad::McMemberRecord;
using testing::FakeRouting;
namespace comp = mad::mcm_comp;
namespace st = wire::mad_status;

constexpr uint64_t kPrefix = 0xfec0000000000000ull;
constexpr uint64_t kJoin = comp::kJoinRequiredMask;
constexpr uint64_t kCreate = comp::kCreateRequiredMask;
// Ports (Subnet::ports index): A and B share 0x8001; C has the default
// partition only; D has only 0x8002; Slow has MTU 1024 and 10 Gb/s.
constexpr uint32_t A = 0, B = 1, C = 2, D = 3, Slow = 4;
constexpr uint64_t kGuid[] = {0x100, 0x200, 0x300, 0x400, 0x500};

wire::Gid mgid(uint16_t n) {
  wire::Gid g;
  g.raw[0] = 0xFF;
  g.raw[1] = 0x15;
  g.raw[3] = 0x01;
  g.raw[14] = static_cast<uint8_t>(n >> 8);
  g.raw[15] = static_cast<uint8_t>(n);
  return g;
}

wire::Gid port_gid(uint32_t port, uint64_t prefix = kPrefix) {
  return wire::Gid::from(prefix, kGuid[port]);
}

McMemberRecord rec(const wire::Gid& group, uint32_t port, uint8_t join_state = 1) {
  McMemberRecord r;
  r.mgid = group;
  r.port_gid = port_gid(port);
  r.q_key = 0x11111111;
  r.p_key = 0xFFFF;
  r.join_state = join_state;
  return r;
}

class McastGroupsTest : public ::testing::Test {
 protected:
  McastGroupsTest() : routing(64) {
    subnet.prefix = kPrefix;
    testing::add_port(subnet, testing::make_port(kGuid[A], 1, {0xFFFF, 0x8001}));
    testing::add_port(subnet, testing::make_port(kGuid[B], 2, {0xFFFF, 0x8001}));
    testing::add_port(subnet, testing::make_port(kGuid[C], 3, {0xFFFF}));
    testing::add_port(subnet, testing::make_port(kGuid[D], 4, {0x8002}));
    testing::add_port(subnet, testing::make_port(kGuid[Slow], 5, {0xFFFF}, 3, 3));
    subnet.mcast_fdb_cap = 64;
    make();
  }
  void make(McastOptions o = {}) {
    groups.reset();
    routing = FakeRouting(64);
    groups.emplace(subnet, routing, o);
    groups->on_trap = [this](uint16_t trap, const McastGroup& g) {
      traps.emplace_back(trap, g.rec.mgid);
    };
    traps.clear();
  }
  // Creates a group with A as its full member; returns its MLID.
  uint16_t create(const wire::Gid& g, uint32_t port = A, uint8_t js = 1) {
    const McastResult r = groups->join(port, rec(g, port, js), kCreate);
    EXPECT_EQ(r.status, st::kOk);
    return r.record.mlid;
  }
  template <class F>
  void expect_fails(uint16_t status, F&& f) {
    const auto before = groups->groups();
    const auto routing_before = routing.state();
    const std::size_t traps_before = traps.size();
    const McastResult r = f();
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(groups->groups(), before) << "the group table changed";
    EXPECT_EQ(routing.state(), routing_before) << "the multicast routing changed";
    EXPECT_EQ(traps.size(), traps_before) << "a trap was sent";
    EXPECT_EQ(groups->check_invariants(), "");
  }

  Subnet subnet;
  FakeRouting routing;
  std::optional<McastGroups> groups;
  std::vector<std::pair<uint16_t, wire::Gid>> traps;
};

// --- 3.1 rule 1: MGID | PortGID | JoinState, else 0x0600 (Set and Delete)
TEST_F(McastGroupsTest, Rule1JoinNeedsMgidPortGidJoinState) {
  create(mgid(1));
  for (uint64_t missing : {comp::kMgid, comp::kPortGid, comp::kJoinState})
    expect_fails(st::kSaInsufficientComponents,
                 [&] { return groups->join(B, rec(mgid(1), B, 2), kCreate & ~missing); });
}

TEST_F(McastGroupsTest, Rule1DeleteNeedsTheSameMask) {
  create(mgid(1));
  for (uint64_t missing : {comp::kMgid, comp::kPortGid, comp::kJoinState})
    expect_fails(st::kSaInsufficientComponents,
                 [&] { return groups->leave(A, rec(mgid(1), A), kJoin & ~missing); });
}

// --- rule 2: a masked MTU or Rate pair with an invalid enum -> 0x0200
TEST_F(McastGroupsTest, Rule2InvalidMtuOrRateEnum) {
  McMemberRecord r = rec(mgid(1), A);
  r.mtu_selector = 2;
  r.mtu = 6;
  expect_fails(st::kSaReqInvalid,
               [&] { return groups->join(A, r, kCreate | comp::kMtuSelector | comp::kMtu); });
  r = rec(mgid(1), A);
  r.rate_selector = 2;
  r.rate = 1;
  expect_fails(st::kSaReqInvalid,
               [&] { return groups->join(A, r, kCreate | comp::kRateSelector | comp::kRate); });
  // The same values unmasked are ignored.
  r.mtu = 0;
  EXPECT_EQ(groups->join(A, r, kCreate).status, st::kOk);
}

// --- rule 3: PortGID prefix -> 0x0500; fe80:: accepted and echoed
TEST_F(McastGroupsTest, Rule3PrefixMismatchIsInvalidGid) {
  McMemberRecord r = rec(mgid(1), A);
  r.port_gid = port_gid(A, 0x1234000000000000ull);
  expect_fails(st::kSaInvalidGid, [&] { return groups->join(A, r, kCreate); });
  expect_fails(st::kSaInvalidGid, [&] { return groups->leave(A, r, kJoin); });
  r.port_gid = port_gid(A, 0xfe80000000000000ull);
  const McastResult ok = groups->join(A, r, kCreate);
  ASSERT_EQ(ok.status, st::kOk);
  EXPECT_EQ(ok.record.port_gid, r.port_gid);
}

// --- rule 4: unknown PortGID GUID -> 0x0200
TEST_F(McastGroupsTest, Rule4UnknownPortGuid) {
  McMemberRecord r = rec(mgid(1), A);
  r.port_gid = wire::Gid::from(kPrefix, 0xDEAD);
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, r, kCreate); });
}

// --- rule 5: proxy join (the SA decides) needs a shared P_Key
TEST_F(McastGroupsTest, Rule5ProxyJoinNeedsASharedPKey) {
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(D, rec(mgid(1), A), kCreate); });
  // B shares 0xFFFF with A: allowed, stored as a proxy member.
  ASSERT_EQ(groups->join(B, rec(mgid(1), A), kCreate).status, st::kOk);
  EXPECT_TRUE(groups->find(mgid(1))->members.at(kGuid[A]).proxy_join);
  // The ProxyJoin bit of the request is ignored.
  McMemberRecord own = rec(mgid(2), C);
  own.proxy_join = true;
  ASSERT_EQ(groups->join(C, own, kCreate | comp::kProxyJoin).status, st::kOk);
  EXPECT_FALSE(groups->find(mgid(2))->members.at(kGuid[C]).proxy_join);
}

// --- rule 6: masked P_Key with a zero base -> 0x0200
TEST_F(McastGroupsTest, Rule6MaskedPKeyWithZeroBase) {
  McMemberRecord r = rec(mgid(1), A);
  r.p_key = 0x8000;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, r, kCreate); });
}

// --- rule 7: creation needs JoinState 0x1 or 0x8, and mask 0x130C7
TEST_F(McastGroupsTest, Rule7CreateNeedsFullOrSendOnlyFull) {
  for (uint8_t js : {uint8_t{0x2}, uint8_t{0x4}, uint8_t{0x6}})
    expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, rec(mgid(1), A, js), kCreate); });
  EXPECT_EQ(groups->join(A, rec(mgid(1), A, 0x8), kCreate).status, st::kOk);
  EXPECT_EQ(groups->find(mgid(1))->full_members, 1u);
}

// --- section 4: an SA without SendOnlyFullMember refuses every join with 0x8
TEST_F(McastGroupsTest, WithoutSendOnlyFullMemberJoinState8IsRefused) {
  make(McastOptions{.send_only_full_member = false});
  for (uint8_t js : {uint8_t{0x8}, uint8_t{0x9}, uint8_t{0xA}})
    expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, rec(mgid(1), A, js), kCreate); });
  create(mgid(1));
  for (uint8_t js : {uint8_t{0x8}, uint8_t{0xC}})
    expect_fails(st::kSaReqInvalid, [&] { return groups->join(B, rec(mgid(1), B, js), kJoin); });
  // The rule 1 mask check still comes first.
  expect_fails(st::kSaInsufficientComponents,
               [&] { return groups->join(B, rec(mgid(1), B, 0x8), kJoin & ~comp::kJoinState); });
  EXPECT_EQ(groups->join(B, rec(mgid(1), B, 0x2), kJoin).status, st::kOk);
}

TEST_F(McastGroupsTest, Rule7CreateNeedsMask130C7) {
  for (uint64_t missing : {comp::kQKey, comp::kTClass, comp::kPKey, comp::kSl, comp::kFlowLabel})
    expect_fails(st::kSaInsufficientComponents,
                 [&] { return groups->join(A, rec(mgid(1), A), kCreate & ~missing); });
}

// --- rule 8: SA-assigned MGID
TEST_F(McastGroupsTest, Rule8ZeroMgidIsAssigned) {
  McMemberRecord r = rec(wire::Gid{}, A);
  const McastResult a = groups->join(A, r, kCreate);
  ASSERT_EQ(a.status, st::kOk);
  EXPECT_EQ(a.record.mgid, McastGroups::assigned_mgid(kPrefix, 2, 0));
  EXPECT_EQ(a.record.mgid.str().substr(0, 15), "ff12:a01b:fec0:");
  EXPECT_EQ(a.record.scope, 0) << "the record keeps the creator's Scope (0), as OpenSM does; the MGID says 2";
  r.scope = 5;
  const McastResult b = groups->join(A, r, kCreate | comp::kScope);
  ASSERT_EQ(b.status, st::kOk);
  EXPECT_EQ(b.record.mgid, McastGroups::assigned_mgid(kPrefix, 5, 1));
  EXPECT_EQ(b.record.mgid.raw[1], 0x15);
  uint32_t counter = 0;
  std::memcpy(&counter, &b.record.mgid.raw[10], 4);
  EXPECT_EQ(counter, 1u);
  EXPECT_EQ(b.record.mgid.raw[14], 0);
  EXPECT_EQ(b.record.mgid.raw[15], 0);
}

TEST_F(McastGroupsTest, Rule8AssignedMgidGivesUpAfter1000Tries) {
  routing = FakeRouting(2000);
  groups.emplace(subnet, routing);
  for (uint32_t i = 0; i < 1000; ++i)
    ASSERT_EQ(groups->join(A, rec(McastGroups::assigned_mgid(kPrefix, 5, i), A), kCreate).status,
              st::kOk);
  McMemberRecord r = rec(wire::Gid{}, A);
  r.scope = 5;
  expect_fails(st::kSaNoResources, [&] { return groups->join(A, r, kCreate | comp::kScope); });
  // The counter moved on: the next try finds a free MGID.
  EXPECT_EQ(groups->join(A, r, kCreate | comp::kScope).status, st::kOk);
}

// --- rule 8: given MGID validation
TEST_F(McastGroupsTest, Rule8MgidValidation) {
  wire::Gid bad = mgid(1);
  bad.raw[0] = 0xFE;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, rec(bad, A), kCreate); });
  wire::Gid flags = mgid(1);
  flags.raw[1] = 0x35;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, rec(flags, A), kCreate); });
  wire::Gid sa2 = McastGroups::assigned_mgid(kPrefix, 2, 77);
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, rec(sa2, A), kCreate); });
  wire::Gid sa5 = McastGroups::assigned_mgid(kPrefix, 5, 77);
  EXPECT_EQ(groups->join(A, rec(sa5, A), kCreate).status, st::kOk);
  // Validation off: anything goes.
  McastOptions off;
  off.creation_validation = false;
  make(off);
  EXPECT_EQ(groups->join(A, rec(bad, A), kCreate).status, st::kOk);
  EXPECT_EQ(groups->join(A, rec(sa2, A), kCreate).status, st::kOk);
}

TEST_F(McastGroupsTest, Rule8IpoibGroupsNeedTheirBroadcastGroup) {
  // ff12:401b:ffff::1 (an IPv4 group of the default partition).
  wire::Gid v4 = McastGroups::ipoib_broadcast_mgid(2, 0xFFFF);
  v4.raw[12] = v4.raw[13] = v4.raw[14] = 0;
  v4.raw[15] = 1;
  McMemberRecord r = rec(v4, A);
  r.q_key = 0x0B1B;
  EXPECT_EQ(groups->join(A, r, kCreate).status, st::kOk);  // broadcast pre-created
  // A Q_Key that differs from the broadcast group's.
  wire::Gid v6 = v4;
  v6.raw[2] = 0x60;
  McMemberRecord r6 = rec(v6, A);
  r6.q_key = 0x1;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, r6, kCreate); });
  // Partition 0x8001 has no broadcast group yet.
  wire::Gid p1 = v4;
  p1.raw[4] = 0x80;
  p1.raw[5] = 0x01;
  McMemberRecord rp = rec(p1, A);
  rp.q_key = 0x0B1B;
  rp.p_key = 0x8001;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(A, rp, kCreate); });
  // Creating that partition's broadcast group is allowed, then the group.
  McMemberRecord bc = rec(McastGroups::ipoib_broadcast_mgid(2, 0x8001), A);
  bc.q_key = 0x0B1B;
  bc.p_key = 0x8001;
  EXPECT_EQ(groups->join(A, bc, kCreate).status, st::kOk);
  EXPECT_EQ(groups->join(A, rp, kCreate).status, st::kOk);
}

// --- rule 8: MTU and Rate from the port and the selectors
TEST_F(McastGroupsTest, Rule8MtuAndRateSelectorsOnCreate) {
  auto with = [&](uint16_t n, uint8_t msel, uint8_t mtu, uint8_t rsel, uint8_t rate) {
    McMemberRecord r = rec(mgid(n), A);
    r.mtu_selector = msel;
    r.mtu = mtu;
    r.rate_selector = rsel;
    r.rate = rate;
    return groups->join(A, r, kCreate | comp::kMtuSelector | comp::kMtu | comp::kRateSelector |
                                  comp::kRate);
  };
  // Unmasked: the port's (4096, 40 Gb/s).
  McastResult r = groups->join(A, rec(mgid(1), A), kCreate);
  EXPECT_EQ(r.record.mtu, 5);
  EXPECT_EQ(r.record.rate, 7);
  EXPECT_EQ(r.record.mtu_selector, 2);
  EXPECT_EQ(r.record.rate_selector, 2);
  r = with(2, 3, 1, 3, 2);  // largest
  EXPECT_EQ(r.record.mtu, 5);
  EXPECT_EQ(r.record.rate, 7);
  r = with(3, 0, 4, 0, 3);  // > 2048, > 10 Gb/s: the port's
  EXPECT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.mtu, 5);
  EXPECT_EQ(r.record.rate, 7);
  r = with(4, 1, 4, 1, 3);  // < 2048 -> 1024; < 10 Gb/s -> 5 Gb/s (enum 5, not 2)
  EXPECT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.mtu, 3);
  EXPECT_EQ(r.record.rate, 5);
  r = with(5, 2, 2, 2, 6);  // = 512, = 20 Gb/s
  EXPECT_EQ(r.record.mtu, 2);
  EXPECT_EQ(r.record.rate, 6);
  expect_fails(st::kSaReqInvalid, [&] { return with(6, 0, 5, 2, 3); });  // > 4096
  expect_fails(st::kSaReqInvalid, [&] { return with(6, 1, 1, 2, 3); });  // < 256
  expect_fails(st::kSaReqInvalid, [&] { return with(6, 2, 3, 0, 7); });  // rate > port
  expect_fails(st::kSaReqInvalid, [&] { return with(6, 2, 3, 2, 16); });  // = 100 Gb/s > port
}

TEST_F(McastGroupsTest, Rule8PltHopAndScopeStoredVerbatim) {
  McMemberRecord r = rec(mgid(1), A);
  r.packet_life_time_selector = 1;
  r.packet_life_time = 17;
  r.hop_limit = 9;
  r.scope = 3;  // the MGID's nibble is 5: the record keeps what the creator sent, as OpenSM
  const McastResult res = groups->join(A, r, kCreate);
  EXPECT_EQ(res.record.packet_life_time, 17);
  EXPECT_EQ(res.record.packet_life_time_selector, 2);
  EXPECT_EQ(res.record.hop_limit, 9);
  EXPECT_EQ(res.record.scope, 3);
}

// --- rule 8: MLID
TEST_F(McastGroupsTest, Rule8MlidRequestedLowestFreeOrNone) {
  EXPECT_EQ(groups->find(McastGroups::ipoib_broadcast_mgid(2, 0xFFFF))->rec.mlid, 0xC000);
  McMemberRecord r = rec(mgid(1), A);
  r.mlid = 0xC010;  // honoured even unmasked
  EXPECT_EQ(groups->join(A, r, kCreate).record.mlid, 0xC010);
  r = rec(mgid(2), A);
  r.mlid = 0xC010;  // taken: lowest free
  EXPECT_EQ(groups->join(A, r, kCreate).record.mlid, 0xC001);
  routing = FakeRouting(1);
  groups.emplace(subnet, routing);  // the broadcast group takes the only MLID
  expect_fails(st::kSaNoResources, [&] { return groups->join(A, rec(mgid(1), A), kCreate); });
}

// --- rule 9: join validation against an existing group
TEST_F(McastGroupsTest, Rule9JoinFieldsMustMatchTheGroup) {
  McMemberRecord g = rec(mgid(1), A);
  g.sl = 3;
  g.flow_label = 0x123;
  g.tclass = 4;
  g.hop_limit = 2;
  ASSERT_EQ(groups->join(A, g, kCreate | comp::kHopLimit).status, st::kOk);
  auto changed = [&](auto edit, uint64_t bit) {
    McMemberRecord r = g;
    r.port_gid = port_gid(B);
    r.join_state = 2;
    edit(r);
    expect_fails(st::kSaReqInvalid, [&] { return groups->join(B, r, kJoin | bit); });
  };
  changed([](McMemberRecord& r) { r.q_key = 7; }, comp::kQKey);
  changed([](McMemberRecord& r) { r.tclass = 7; }, comp::kTClass);
  changed([](McMemberRecord& r) { r.sl = 7; }, comp::kSl);
  changed([](McMemberRecord& r) { r.flow_label = 7; }, comp::kFlowLabel);
  changed([](McMemberRecord& r) { r.hop_limit = 7; }, comp::kHopLimit);
  changed([](McMemberRecord& r) { r.p_key = 0x8001; }, comp::kPKey);
  // P_Key matches by base: 0x7FFF against 0xFFFF is fine...
  McMemberRecord ok = g;
  ok.port_gid = port_gid(B);
  ok.p_key = 0x7FFF;
  EXPECT_EQ(groups->join(B, ok, kJoin | comp::kPKey).status, st::kOk);
  // ...but two limited members do not match.
  McMemberRecord lim = rec(mgid(2), A);
  lim.p_key = 0x0001;
  subnet.ports[A].pkeys.push_back(0x0001);
  subnet.ports[B].pkeys.push_back(0x0001);
  ASSERT_EQ(groups->join(A, lim, kCreate).status, st::kOk);
  lim.port_gid = port_gid(B);
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(B, lim, kJoin | comp::kPKey); });
  // Unmasked fields are not compared; validation off compares nothing.
  McMemberRecord loose = g;
  loose.port_gid = port_gid(C);
  loose.q_key = 99;
  EXPECT_EQ(groups->join(C, loose, kJoin).status, st::kOk);
  McastOptions off;
  off.join_validation = false;
  make(off);
  ASSERT_EQ(groups->join(A, g, kCreate).status, st::kOk);
  loose.port_gid = port_gid(B);
  EXPECT_EQ(groups->join(B, loose, kJoin | comp::kQKey).status, st::kOk);
}

// --- rule 10: selectors against the group, port MTU/rate, JoinState, P_Key
TEST_F(McastGroupsTest, Rule10SelectorsAreTestedAgainstTheGroup) {
  create(mgid(1));  // MTU 5, rate 7
  McMemberRecord r = rec(mgid(1), B, 2);
  r.mtu_selector = 1;  // < 4096: the group's 4096 does not qualify
  r.mtu = 5;
  expect_fails(st::kSaReqInvalid,
               [&] { return groups->join(B, r, kJoin | comp::kMtuSelector | comp::kMtu); });
  r.mtu_selector = 2;
  EXPECT_EQ(groups->join(B, r, kJoin | comp::kMtuSelector | comp::kMtu).status, st::kOk);
  McMemberRecord q = rec(mgid(1), C, 2);
  q.rate_selector = 0;  // > 40 Gb/s
  q.rate = 7;
  expect_fails(st::kSaReqInvalid,
               [&] { return groups->join(C, q, kJoin | comp::kRateSelector | comp::kRate); });
}

TEST_F(McastGroupsTest, Rule10PortMustReachTheGroupMtuAndRate) {
  create(mgid(1));  // 4096 and 40 Gb/s; Slow has 1024 and 10 Gb/s
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(Slow, rec(mgid(1), Slow, 2), kJoin); });
  subnet.ports[Slow].neighbor_mtu = 5;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(Slow, rec(mgid(1), Slow, 2), kJoin); });
  subnet.ports[Slow].rate = 7;
  EXPECT_EQ(groups->join(Slow, rec(mgid(1), Slow, 2), kJoin).status, st::kOk);
}

TEST_F(McastGroupsTest, Rule10JoinStateMustNotBeZero) {
  create(mgid(1));
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(B, rec(mgid(1), B, 0), kJoin); });
}

TEST_F(McastGroupsTest, Rule10PortMustHoldTheGroupPKey) {
  McMemberRecord g = rec(mgid(1), A);
  g.p_key = 0x8001;
  ASSERT_EQ(groups->join(A, g, kCreate).status, st::kOk);
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(C, rec(mgid(1), C, 2), kJoin); });
  // A fresh group whose creator lacks the P_Key is rolled back, MLID freed.
  McMemberRecord c = rec(mgid(2), C);
  c.p_key = 0x8001;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(C, c, kCreate); });
  EXPECT_EQ(groups->find(mgid(2)), nullptr);
  EXPECT_EQ(routing.freed.size(), 1u);
}

// --- rule 11: an existing member's ProxyJoin decides who may change it
TEST_F(McastGroupsTest, Rule11ExistingMemberProxyRules) {
  create(mgid(1), A);  // A joined by itself: only A may change it
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(B, rec(mgid(1), A, 2), kJoin); });
  // A group in partition 0x8001, with A joined by B as a proxy.
  McMemberRecord p = rec(mgid(2), A);
  p.p_key = 0x8001;
  ASSERT_EQ(groups->join(B, p, kCreate).status, st::kOk);
  // C shares 0xFFFF with A (rule 5 passes) but does not hold 0x8001.
  McMemberRecord again = p;
  again.join_state = 2;
  expect_fails(st::kSaReqInvalid, [&] { return groups->join(C, again, kJoin); });
  // A itself holds 0x8001.
  EXPECT_EQ(groups->join(A, again, kJoin).status, st::kOk);
}

// --- rule 12: JoinState OR, accumulated state returned, idempotent
TEST_F(McastGroupsTest, Rule12JoinStateIsOredAndReturned) {
  create(mgid(1));
  const std::size_t calls = routing.changes;
  McastResult r = groups->join(A, rec(mgid(1), A, 2), kJoin);
  EXPECT_EQ(r.record.join_state, 3);
  r = groups->join(A, rec(mgid(1), A, 2), kJoin);  // a retry
  EXPECT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.join_state, 3);
  EXPECT_EQ(groups->find(mgid(1))->members.size(), 1u);
  EXPECT_EQ(routing.changes, calls) << "a JoinState change is no reroute";
  EXPECT_EQ(groups->check_invariants(), "");
}

// --- response: the request with group fields, selectors 2
TEST_F(McastGroupsTest, JoinResponseCarriesTheGroupFields) {
  McMemberRecord g = rec(mgid(1), A);
  g.tclass = 1;
  g.sl = 2;
  g.flow_label = 3;
  g.scope = 5;
  ASSERT_EQ(groups->join(A, g, kCreate).status, st::kOk);
  McMemberRecord j = rec(mgid(1), B, 4);
  j.q_key = 0;
  j.sl = 0;
  const McastResult r = groups->join(B, j, kJoin);
  ASSERT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.mgid, mgid(1));
  EXPECT_EQ(r.record.port_gid, port_gid(B));
  EXPECT_EQ(r.record.q_key, 0x11111111u);
  EXPECT_EQ(r.record.mlid, 0xC001);
  EXPECT_EQ(r.record.tclass, 1);
  EXPECT_EQ(r.record.sl, 2);
  EXPECT_EQ(r.record.flow_label, 3u);
  EXPECT_EQ(r.record.p_key, 0xFFFF);
  EXPECT_EQ(r.record.mtu, 5);
  EXPECT_EQ(r.record.rate, 7);
  EXPECT_EQ(r.record.mtu_selector, 2);
  EXPECT_EQ(r.record.rate_selector, 2);
  EXPECT_EQ(r.record.packet_life_time_selector, 2);
  EXPECT_EQ(r.record.scope, 5);
  EXPECT_EQ(r.record.join_state, 4);
}

// --- admission and member lists through McastRouting
TEST_F(McastGroupsTest, AdmissionRefusedIsNoResources) {
  routing.refuse.insert(A);
  expect_fails(st::kSaNoResources, [&] { return groups->join(A, rec(mgid(1), A), kCreate); });
  EXPECT_EQ(groups->find(mgid(1)), nullptr);
  routing.refuse.clear();
  create(mgid(1));
  routing.refuse.insert(B);
  expect_fails(st::kSaNoResources, [&] { return groups->join(B, rec(mgid(1), B, 2), kJoin); });
}

TEST_F(McastGroupsTest, NewOrRemovedPortsPublishTheMembers) {
  const uint16_t mlid = create(mgid(1));
  const uint64_t a = subnet.ports[A].guid, c = subnet.ports[C].guid;
  EXPECT_EQ(routing.members[mlid], (std::set<uint64_t>{a}));
  ASSERT_EQ(groups->join(C, rec(mgid(1), C, 2), kJoin).status, st::kOk);
  EXPECT_EQ(routing.members[mlid], (std::set<uint64_t>{a, c}));
  EXPECT_EQ(routing.admits.back(), (std::pair<uint32_t, uint16_t>{C, mlid}));
  ASSERT_EQ(groups->leave(C, rec(mgid(1), C, 2), kJoin).status, st::kOk);
  EXPECT_EQ(routing.members[mlid], (std::set<uint64_t>{a}));
}

// --- 3.2 leave
TEST_F(McastGroupsTest, LeaveUnknownGroupOrMember) {
  create(mgid(1));
  expect_fails(st::kSaReqInvalid, [&] { return groups->leave(A, rec(mgid(2), A), kJoin); });
  expect_fails(st::kSaReqInvalid, [&] { return groups->leave(B, rec(mgid(1), B), kJoin); });
}

TEST_F(McastGroupsTest, LeaveJoinStateMustOverlapAndBeASubset) {
  create(mgid(1));
  ASSERT_EQ(groups->join(A, rec(mgid(1), A, 2), kJoin).status, st::kOk);  // 0x3
  expect_fails(st::kSaReqInvalid, [&] { return groups->leave(A, rec(mgid(1), A, 0x4), kJoin); });
  expect_fails(st::kSaReqInvalid, [&] { return groups->leave(A, rec(mgid(1), A, 0x6), kJoin); });
  expect_fails(st::kSaReqInvalid, [&] { return groups->leave(A, rec(mgid(1), A, 0x0), kJoin); });
  const McastResult r = groups->leave(A, rec(mgid(1), A, 0x2), kJoin);
  ASSERT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.join_state, 1);
}

TEST_F(McastGroupsTest, LeaveProxyRules) {
  create(mgid(1), A);
  ASSERT_EQ(groups->join(B, rec(mgid(1), B, 2), kJoin).status, st::kOk);
  expect_fails(st::kSaReqInvalid, [&] { return groups->leave(A, rec(mgid(1), B, 2), kJoin); });
}

TEST_F(McastGroupsTest, LeaveResponseEchoesTheRequest) {
  create(mgid(1));
  ASSERT_EQ(groups->join(B, rec(mgid(1), B, 3), kJoin).status, st::kOk);
  McMemberRecord l = rec(mgid(1), B, 2);
  l.q_key = 0;
  l.mtu_selector = 1;
  const McastResult r = groups->leave(B, l, kJoin);
  ASSERT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.join_state, 1);
  EXPECT_EQ(r.record.q_key, 0u) << "group fields are not filled in";
  EXPECT_EQ(r.record.mlid, 0);
  EXPECT_EQ(r.record.mtu_selector, 2);
  EXPECT_EQ(r.record.rate_selector, 2);
}

// --- group lifetime, traps 66 and 67, cleanup
TEST_F(McastGroupsTest, LifetimeTrapsAndCleanup) {
  const uint16_t mlid = create(mgid(1));
  ASSERT_EQ(traps.size(), 1u);
  EXPECT_EQ(traps[0], (std::pair<uint16_t, wire::Gid>{66, mgid(1)}));
  ASSERT_EQ(groups->join(B, rec(mgid(1), B, 0x8), kJoin).status, st::kOk);  // SendOnlyFull
  ASSERT_EQ(groups->join(C, rec(mgid(1), C, 0x2), kJoin).status, st::kOk);
  EXPECT_EQ(groups->find(mgid(1))->full_members, 2u);
  EXPECT_EQ(traps.size(), 1u);
  ASSERT_EQ(groups->leave(A, rec(mgid(1), A, 1), kJoin).status, st::kOk);
  EXPECT_EQ(traps.size(), 1u) << "B (SendOnlyFull) keeps the group alive";
  ASSERT_EQ(groups->leave(B, rec(mgid(1), B, 8), kJoin).status, st::kOk);
  ASSERT_EQ(traps.size(), 2u);
  EXPECT_EQ(traps[1], (std::pair<uint16_t, wire::Gid>{67, mgid(1)}));
  EXPECT_EQ(groups->find(mgid(1)), nullptr) << "the NonMember C went with it";
  EXPECT_EQ(routing.freed, (std::vector<uint16_t>{mlid}));
  EXPECT_TRUE(routing.members[mlid].empty());
  EXPECT_EQ(groups->check_invariants(), "");
}

TEST_F(McastGroupsTest, NonFullMemberLeavingAloneIsRemovedOthersKept) {
  create(mgid(1));
  ASSERT_EQ(groups->join(C, rec(mgid(1), C, 0x6), kJoin).status, st::kOk);
  // C keeps 0x4 while a full member remains.
  EXPECT_EQ(groups->leave(C, rec(mgid(1), C, 0x2), kJoin).record.join_state, 0x4);
  EXPECT_EQ(groups->leave(C, rec(mgid(1), C, 0x4), kJoin).record.join_state, 0);
  EXPECT_EQ(groups->find(mgid(1))->members.count(kGuid[C]), 0u);
}

TEST_F(McastGroupsTest, BroadcastGroupIsPreCreatedAndWellKnown) {
  const wire::Gid bc = McastGroups::ipoib_broadcast_mgid(2, 0xFFFF);
  EXPECT_EQ(bc.str(), "ff12:401b:ffff::ffff:ffff");
  const McastGroup* g = groups->find(bc);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->well_known);
  EXPECT_EQ(g->rec.q_key, 0x0B1Bu);
  EXPECT_EQ(g->rec.mtu, 4);
  EXPECT_EQ(g->rec.rate, 3);
  EXPECT_EQ(g->rec.sl, 0);
  EXPECT_EQ(g->rec.scope, 2);
  EXPECT_EQ(g->rec.p_key, 0xFFFF);
  // IPoIB joins it with MGID | PortGID | P_Key | JoinState only.
  McMemberRecord j = rec(bc, A);
  ASSERT_EQ(groups->join(A, j, kJoin | comp::kPKey).status, st::kOk);
  EXPECT_EQ(traps.size(), 1u);
  ASSERT_EQ(groups->leave(A, j, kJoin).status, st::kOk);
  EXPECT_EQ(traps.size(), 2u);
  g = groups->find(bc);
  ASSERT_NE(g, nullptr) << "well-known groups survive";
  EXPECT_TRUE(g->members.empty());
  EXPECT_TRUE(routing.freed.empty());
}

// --- 3.2's OpenSM leak: off by default, reproducible on request
TEST_F(McastGroupsTest, Join9Leave1DoesNotLeakByDefault) {
  const uint16_t mlid = create(mgid(1), A, 0x9);
  const McastResult r = groups->leave(A, rec(mgid(1), A, 0x1), kJoin);
  ASSERT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.join_state, 0x8);
  EXPECT_EQ(groups->find(mgid(1))->full_members, 1u);
  EXPECT_EQ(groups->check_invariants(), "");
  ASSERT_EQ(groups->leave(A, rec(mgid(1), A, 0x8), kJoin).status, st::kOk);
  EXPECT_EQ(groups->find(mgid(1)), nullptr);
  EXPECT_EQ(routing.freed, (std::vector<uint16_t>{mlid}));
}

TEST_F(McastGroupsTest, Join9Leave1LeaksWhenReproducingOpenSm) {
  McastOptions o;
  o.reproduce_opensm_leave_leak = true;
  make(o);
  create(mgid(1), A, 0x9);
  const McastResult r = groups->leave(A, rec(mgid(1), A, 0x1), kJoin);
  ASSERT_EQ(r.status, st::kOk);
  EXPECT_EQ(r.record.join_state, 0) << "the member is removed";
  const McastGroup* g = groups->find(mgid(1));
  ASSERT_NE(g, nullptr) << "the group and its MLID leak";
  EXPECT_TRUE(g->members.empty());
  EXPECT_EQ(g->full_members, 1u);
  EXPECT_TRUE(routing.freed.empty());
  EXPECT_NE(groups->check_invariants(), "");
}

// --- 3.3 Get/GetTable
TEST_F(McastGroupsTest, GetHidesGroupsOfOtherPartitions) {
  McMemberRecord p = rec(mgid(1), A);
  p.p_key = 0x8001;
  ASSERT_EQ(groups->join(A, p, kCreate).status, st::kOk);
  create(mgid(2));
  EXPECT_EQ(groups->get(A, {}, 0, false).size(), 3u);  // with the broadcast group
  EXPECT_EQ(groups->get(C, {}, 0, false).size(), 2u);
  EXPECT_EQ(groups->get(D, {}, 0, false).size(), 0u);
}

TEST_F(McastGroupsTest, GetUntrustedIsOneZeroedRecordPerGroup) {
  create(mgid(1));
  ASSERT_EQ(groups->join(B, rec(mgid(1), B, 2), kJoin).status, st::kOk);
  McMemberRecord q;
  q.mgid = mgid(1);
  const auto recs = groups->get(C, q, comp::kMgid, false);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_TRUE(recs[0].port_gid.is_zero());
  EXPECT_EQ(recs[0].join_state, 0);
  EXPECT_EQ(recs[0].mlid, 0xC001);
  EXPECT_EQ(recs[0].q_key, 0x11111111u);
}

TEST_F(McastGroupsTest, GetTrustedIsOneRecordPerMember) {
  create(mgid(1));
  ASSERT_EQ(groups->join(A, rec(mgid(1), B, 2), kJoin).status, st::kOk);  // proxy
  McMemberRecord q;
  q.mgid = mgid(1);
  auto recs = groups->get(C, q, comp::kMgid, true);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].port_gid, port_gid(A));
  EXPECT_EQ(recs[0].join_state, 1);
  EXPECT_FALSE(recs[0].proxy_join);
  EXPECT_EQ(recs[1].port_gid, port_gid(B));
  EXPECT_EQ(recs[1].join_state, 2);
  EXPECT_TRUE(recs[1].proxy_join);
  q.port_gid = port_gid(B);
  recs = groups->get(C, q, comp::kMgid | comp::kPortGid, true);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].port_gid, port_gid(B));
}

TEST_F(McastGroupsTest, GetMatchesMaskedFields) {
  create(mgid(1));
  McMemberRecord q;
  q.q_key = 0x11111111;
  EXPECT_EQ(groups->get(A, q, comp::kQKey, false).size(), 1u);
  q.q_key = 1;
  EXPECT_EQ(groups->get(A, q, comp::kQKey, false).size(), 0u);
  q = {};
  q.mlid = 0xC000;
  EXPECT_EQ(groups->get(A, q, comp::kMlid, false).size(), 1u);  // the broadcast group
  q = {};
  q.mtu_selector = 0;  // MTU > 2048: only the 4096 group
  q.mtu = 4;
  EXPECT_EQ(groups->get(A, q, comp::kMtuSelector | comp::kMtu, false).size(), 1u);
  q.rate_selector = 1;  // and rate < 40: none
  q.rate = 7;
  EXPECT_EQ(groups->get(A, q, comp::kMtuSelector | comp::kMtu | comp::kRateSelector | comp::kRate,
                        false)
                .size(),
            0u);
}

TEST_F(McastGroupsTest, DropPortLeavesEveryGroup) {
  create(mgid(1), A);
  create(mgid(2), B);
  ASSERT_EQ(groups->join(A, rec(mgid(2), A, 2), kJoin).status, st::kOk);
  groups->drop_port(kGuid[A]);
  EXPECT_EQ(groups->find(mgid(1)), nullptr);
  ASSERT_NE(groups->find(mgid(2)), nullptr);
  EXPECT_EQ(groups->find(mgid(2))->members.count(kGuid[A]), 0u);
  EXPECT_EQ(groups->check_invariants(), "");
}

}  // namespace
}  // namespace ibfab::sm
