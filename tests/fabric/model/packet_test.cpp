#include "fabric/model/packet.h"

#include <gtest/gtest.h>

namespace ibfab::fabric {
namespace {

TEST(PacketPool, BuffersAreRecycledNotReallocated) {
  PacketPool pool;
  for (int i = 0; i < 1000; ++i) {
    PacketRef a = pool.make(290);
    PacketRef b = pool.make(4000);
  }
  EXPECT_EQ(pool.buffers_allocated(), 2u) << "one small and one large buffer, reused";
  EXPECT_EQ(pool.buffers_in_use(), 0u);
}

TEST(PacketPool, CopiesShareOnePayloadUntilTheLastGoes) {
  PacketPool pool;
  PacketRef a = pool.make(100);
  a.mutable_bytes()[0] = 42;
  {
    PacketRef b = a;
    EXPECT_FALSE(a.unique());
    EXPECT_EQ(b.bytes()[0], 42);
    EXPECT_EQ(b.id(), a.id());
    EXPECT_EQ(pool.buffers_in_use(), 1u);
  }
  EXPECT_TRUE(a.unique());
  PacketRef c = pool.clone(a);
  EXPECT_NE(c.id(), a.id());
  EXPECT_EQ(c.bytes()[0], 42);
  EXPECT_EQ(pool.buffers_in_use(), 2u);
}

TEST(PacketPool, IdsAreSequentialAndOversizeIsRefused) {
  PacketPool pool;
  const uint64_t first = pool.make(10).id();
  EXPECT_EQ(pool.make(10).id(), first + 1);
  EXPECT_THROW(pool.make(PacketPool::kMaxPacket + 1), std::length_error);
  PacketRef p = pool.make(10);
  EXPECT_THROW(p.resize(100000), std::length_error);
}

}  // namespace
}  // namespace ibfab::fabric

#include "fabric/model/mad_packet.h"
#include "fabric/wire/crc.h"

namespace ibfab::fabric {
namespace {

TEST(PacketCrcs, PatchedPacketsAreSealedWhenObserved) {
  PacketPool pool;
  MadSend send;
  send.vl15 = true;
  send.dlid = 0xFFFF;
  send.slid = 0xFFFF;
  std::array<uint8_t, 256> mad{};
  mad[0] = 1;
  mad[1] = 0x81;
  PacketRef p = make_mad_packet(pool, send, mad);
  EXPECT_FALSE(p.crcs_valid()) << "a MAD packet's CRCs wait until it is observed";
  p.seal();
  EXPECT_TRUE(p.crcs_valid());
  EXPECT_TRUE(wire::icrc_ok(p.bytes()));
  EXPECT_TRUE(wire::vcrc_ok(p.bytes()));
  p.mutable_bytes()[28 + 6] = 1;  // a DR SMP's hop pointer moves on
  reseal(p);
  EXPECT_FALSE(p.crcs_valid());
  EXPECT_FALSE(wire::icrc_ok(p.bytes())) << "not recomputed until observed";
  PacketRef copy = pool.clone(p);
  EXPECT_FALSE(copy.crcs_valid()) << "a copy inherits the stale mark";
  p.seal();
  EXPECT_TRUE(p.crcs_valid());
  EXPECT_TRUE(wire::icrc_ok(p.bytes()));
  EXPECT_TRUE(wire::vcrc_ok(p.bytes()));
}

}  // namespace
}  // namespace ibfab::fabric
