// The HCA's memory protection table: which accesses through which keys
// reach which bytes, and which fault, and how.
#include "fabric/model/memory_table.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <numeric>

namespace ibfab::fabric {
namespace {

constexpr uint32_t kPd = 3;
constexpr uint32_t kOtherPd = 4;
constexpr uint32_t kRemoteAll = access::kRemoteRead | access::kRemoteWrite | access::kRemoteAtomic;

class MemoryTableTest : public ::testing::Test {
 protected:
  MemoryTableTest() : host(0x10000, 4096) {
    std::iota(host.bytes().begin(), host.bytes().end(), uint8_t{0});
  }
  BufferMemory host;
  MemoryTable table;
};

TEST_F(MemoryTableTest, ARegionsKeyReachesItsBytesAndNothingAround) {
  const uint32_t key = table.register_region(kPd, host, 0x10100, 256, 0x10100, access::kLocalWrite);
  ASSERT_NE(key, 0u);
  DmaTarget t;
  EXPECT_EQ(table.local(key, kPd, 0x10100, 256, true, t), MemoryFault::kNone);
  EXPECT_EQ(t.memory, &host);
  EXPECT_EQ(t.addr, 0x10100u);
  EXPECT_EQ(table.local(key, kPd, 0x101ff, 1, false, t), MemoryFault::kNone);
  EXPECT_EQ(table.local(key, kPd, 0x101ff, 2, false, t), MemoryFault::kOutOfRange);
  EXPECT_EQ(table.local(key, kPd, 0x100ff, 1, false, t), MemoryFault::kOutOfRange);
  EXPECT_EQ(table.local(key, kPd, 0x10100, 0, false, t), MemoryFault::kNone);
  EXPECT_EQ(table.local(key, kOtherPd, 0x10100, 1, false, t), MemoryFault::kWrongPd);
  EXPECT_EQ(table.local(key ^ 0x100, kPd, 0x10100, 1, false, t), MemoryFault::kBadKey);
  EXPECT_EQ(table.local(key + 1, kPd, 0x10100, 1, false, t), MemoryFault::kBadKey);  // another tag
}

TEST_F(MemoryTableTest, LocalWriteAndRemoteAccessAreEachGrantedOrRefused) {
  const uint32_t ro = table.register_region(kPd, host, 0x10000, 64, 0x10000, 0);
  const uint32_t rr = table.register_region(kPd, host, 0x10000, 64, 0x10000, access::kRemoteRead);
  DmaTarget t;
  EXPECT_EQ(table.local(ro, kPd, 0x10000, 8, false, t), MemoryFault::kNone);
  EXPECT_EQ(table.local(ro, kPd, 0x10000, 8, true, t), MemoryFault::kNoAccess);
  EXPECT_EQ(table.remote(ro, kPd, 9, 0x10000, 8, access::kRemoteRead, t), MemoryFault::kNoAccess);
  EXPECT_EQ(table.remote(rr, kPd, 9, 0x10000, 8, access::kRemoteRead, t), MemoryFault::kNone);
  EXPECT_EQ(table.remote(rr, kPd, 9, 0x10000, 8, access::kRemoteWrite, t), MemoryFault::kNoAccess);
  EXPECT_EQ(table.remote(rr, kPd, 9, 0x10000, 8, access::kRemoteAtomic, t), MemoryFault::kNoAccess);
  EXPECT_EQ(table.remote(rr, kOtherPd, 9, 0x10000, 8, access::kRemoteRead, t), MemoryFault::kWrongPd);
  EXPECT_EQ(table.remote(rr, kPd, 9, 0x10000 + 60, 8, access::kRemoteRead, t), MemoryFault::kOutOfRange);
}

TEST_F(MemoryTableTest, AZeroBasedRegionIsAddressedFromItsIova) {
  const uint32_t key = table.register_region(kPd, host, 0x10200, 100, 0, kRemoteAll | access::kLocalWrite);
  DmaTarget t;
  ASSERT_EQ(table.remote(key, kPd, 1, 10, 4, access::kRemoteWrite, t), MemoryFault::kNone);
  EXPECT_EQ(t.addr, 0x1020au);
  EXPECT_EQ(table.remote(key, kPd, 1, 0x10200, 4, access::kRemoteWrite, t), MemoryFault::kOutOfRange);
}

TEST_F(MemoryTableTest, ADeregisteredKeyFaultsEvenWhenItsSlotIsReused) {
  const uint32_t a = table.register_region(kPd, host, 0x10000, 64, 0x10000, 0);
  ASSERT_EQ(table.deregister(a), 0);
  EXPECT_EQ(table.deregister(a), EINVAL);
  const uint32_t b = table.register_region(kPd, host, 0x10000, 64, 0x10000, 0);
  EXPECT_EQ(b >> 8, a >> 8);  // the same slot, another tag
  EXPECT_NE(a, b);
  DmaTarget t;
  EXPECT_EQ(table.local(a, kPd, 0x10000, 1, false, t), MemoryFault::kBadKey);
  EXPECT_EQ(table.local(b, kPd, 0x10000, 1, false, t), MemoryFault::kNone);
  EXPECT_EQ(table.regions(), 1u);
}

TEST_F(MemoryTableTest, ReregistrationMovesTheRegionUnderTheSameKey) {
  const uint32_t key = table.register_region(kPd, host, 0x10000, 64, 0x10000, 0);
  ASSERT_EQ(table.reregister(key, kOtherPd, host, 0x10800, 128, 0x10800, access::kLocalWrite), 0);
  DmaTarget t;
  EXPECT_EQ(table.local(key, kPd, 0x10800, 1, false, t), MemoryFault::kWrongPd);
  EXPECT_EQ(table.local(key, kOtherPd, 0x10000, 1, false, t), MemoryFault::kOutOfRange);
  EXPECT_EQ(table.local(key, kOtherPd, 0x10800, 128, true, t), MemoryFault::kNone);
  EXPECT_EQ(table.reregister(key + 1, kPd, host, 0, 1, 0, 0), EINVAL);
}

TEST_F(MemoryTableTest, GatherAndScatterCrossSgesAndStopAtTheirEnd) {
  const uint32_t key = table.register_region(kPd, host, 0x10000, 4096, 0x10000, access::kLocalWrite);
  const Sge sges[] = {{0x10010, 3, key}, {0x10100, 0, key}, {0x10200, 5, key}};
  std::array<uint8_t, 6> got{};
  // Bytes 2..7 of the list: 0x12 from the first SGE, then 0x00..0x04 from the third.
  ASSERT_EQ(table.gather(sges, kPd, 2, got), MemoryFault::kNone);
  EXPECT_EQ(got, (std::array<uint8_t, 6>{0x12, 0x00, 0x01, 0x02, 0x03, 0x04}));
  std::array<uint8_t, 7> too_many{};
  EXPECT_EQ(table.gather(sges, kPd, 2, too_many), MemoryFault::kOutOfRange);

  const std::array<uint8_t, 4> in{0xa0, 0xa1, 0xa2, 0xa3};
  ASSERT_EQ(table.scatter(sges, kPd, 1, in), MemoryFault::kNone);
  EXPECT_EQ(host.bytes()[0x10], 0x10);
  EXPECT_EQ(host.bytes()[0x11], 0xa0);
  EXPECT_EQ(host.bytes()[0x12], 0xa1);
  EXPECT_EQ(host.bytes()[0x200], 0xa2);
  EXPECT_EQ(host.bytes()[0x201], 0xa3);
  EXPECT_EQ(host.bytes()[0x202], 0x02);
}

TEST_F(MemoryTableTest, ScatterNeedsLocalWriteAndGatherAValidKeyInEverySge) {
  const uint32_t ro = table.register_region(kPd, host, 0x10000, 64, 0x10000, 0);
  const std::array<uint8_t, 1> in{1};
  const Sge to_ro[] = {{0x10000, 1, ro}};
  EXPECT_EQ(table.scatter(to_ro, kPd, 0, in), MemoryFault::kNoAccess);
  EXPECT_EQ(host.bytes()[0], 0);
  const Sge bad_second[] = {{0x10000, 1, ro}, {0x10000, 1, ro + 1}};
  std::array<uint8_t, 2> out{};
  EXPECT_EQ(table.gather(bad_second, kPd, 0, out), MemoryFault::kBadKey);
}

TEST_F(MemoryTableTest, AnUnmappedHostAddressIsAHostFault) {
  const uint32_t key = table.register_region(kPd, host, 0x20000, 64, 0x20000, access::kLocalWrite);
  const Sge sge[] = {{0x20000, 8, key}};
  std::array<uint8_t, 8> out{};
  EXPECT_EQ(table.gather(sge, kPd, 0, out), MemoryFault::kHostFault);
}

TEST_F(MemoryTableTest, AType2WindowGrantsOnlyItsRangeToItsQpUntilInvalidated) {
  const uint32_t mr = table.register_region(kPd, host, 0x10000, 4096, 0x10000,
                                            access::kLocalWrite | access::kMwBind | kRemoteAll);
  const uint32_t mw = table.allocate_window(kPd, 2);
  ASSERT_NE(mw, 0u);
  DmaTarget t;
  EXPECT_EQ(table.remote(mw, kPd, 7, 0x10000, 1, access::kRemoteRead, t), MemoryFault::kBadKey);  // unbound
  uint32_t rkey = 0;
  const uint32_t tag = (mw + 1) & 0xff;
  ASSERT_EQ(table.bind_window(mw, tag, mr, kPd, 7, 0x10100, 16, access::kRemoteRead, rkey), MemoryFault::kNone);
  EXPECT_EQ(rkey, (mw & ~0xffu) | tag);
  EXPECT_EQ(table.remote(rkey, kPd, 7, 0x10100, 16, access::kRemoteRead, t), MemoryFault::kNone);
  EXPECT_EQ(t.addr, 0x10100u);
  EXPECT_EQ(table.remote(rkey, kPd, 8, 0x10100, 16, access::kRemoteRead, t), MemoryFault::kWrongQp);
  EXPECT_EQ(table.remote(rkey, kPd, 7, 0x10100, 17, access::kRemoteRead, t), MemoryFault::kOutOfRange);
  EXPECT_EQ(table.remote(rkey, kPd, 7, 0x10100, 1, access::kRemoteWrite, t), MemoryFault::kNoAccess);
  EXPECT_EQ(table.remote(mw, kPd, 7, 0x10100, 1, access::kRemoteRead, t), MemoryFault::kBadKey);  // the old key
  EXPECT_EQ(table.deregister(mr), EBUSY);
  EXPECT_EQ(table.deallocate_window(rkey), EBUSY);
  ASSERT_EQ(table.invalidate(rkey, kPd), MemoryFault::kNone);
  EXPECT_EQ(table.remote(rkey, kPd, 7, 0x10100, 1, access::kRemoteRead, t), MemoryFault::kBadKey);
  EXPECT_EQ(table.invalidate(rkey, kPd), MemoryFault::kBadKey);
  EXPECT_EQ(table.deallocate_window(rkey), 0);
  EXPECT_EQ(table.deregister(mr), 0);
}

TEST_F(MemoryTableTest, AWindowNeedsMwBindOnItsRegionAndLocalWriteForRemoteWrites) {
  const uint32_t no_bind = table.register_region(kPd, host, 0x10000, 64, 0x10000, access::kLocalWrite);
  const uint32_t no_write = table.register_region(kPd, host, 0x10000, 64, 0x10000, access::kMwBind);
  const uint32_t mw = table.allocate_window(kPd, 1);
  uint32_t rkey = 0;
  EXPECT_EQ(table.bind_window(mw, 0, no_bind, kPd, 0, 0x10000, 8, access::kRemoteRead, rkey), MemoryFault::kNoAccess);
  EXPECT_EQ(table.bind_window(mw, 0, no_write, kPd, 0, 0x10000, 8, access::kRemoteWrite, rkey),
            MemoryFault::kNoAccess);
  EXPECT_EQ(table.bind_window(mw, 0, no_write, kPd, 0, 0x10000, 65, access::kRemoteRead, rkey),
            MemoryFault::kOutOfRange);
  EXPECT_EQ(table.bind_window(mw, 0, no_write, kOtherPd, 0, 0x10000, 8, access::kRemoteRead, rkey),
            MemoryFault::kWrongPd);
  ASSERT_EQ(table.bind_window(mw, 0, no_write, kPd, 0, 0x10008, 8, access::kRemoteRead, rkey), MemoryFault::kNone);
  EXPECT_EQ(rkey, (mw & ~0xffu) | ((mw + 1) & 0xff));  // ibv_inc_rkey's step
  DmaTarget t;
  // A type 1 window serves any QP of its PD.
  EXPECT_EQ(table.remote(rkey, kPd, 99, 0x10008, 8, access::kRemoteRead, t), MemoryFault::kNone);
  uint32_t unbound = 0;
  ASSERT_EQ(table.bind_window(rkey, 0, 0, kPd, 0, 0, 0, 0, unbound), MemoryFault::kNone);
  EXPECT_EQ(table.remote(rkey, kPd, 99, 0x10008, 8, access::kRemoteRead, t), MemoryFault::kBadKey);
  EXPECT_EQ(table.deregister(no_write), 0);
}

}  // namespace
}  // namespace ibfab::fabric
