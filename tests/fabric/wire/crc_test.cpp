#include "fabric/wire/crc.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "fabric/wire/packet_codec.h"
#include "tests/fabric/wire/sample_packets.h"

namespace ibfab::wire {
namespace {

std::span<const uint8_t> text(const char* s) {
  return {reinterpret_cast<const uint8_t*>(s), std::strlen(s)};
}

TEST(wire_Crc, CheckValues) {
  // CRC-32 (IEEE 802.3) check value; CRC-16 poly 0x100B reflected, preset and
  // complement 0xffff (computed with crcmod).
  EXPECT_EQ(crc32_update(0xffffffffu, text("123456789")) ^ 0xffffffffu, 0xcbf43926u);
  EXPECT_EQ(crc16_update(0xffff, text("123456789")) ^ 0xffff, 0x0a3d);
}

TEST(wire_Crc, SlicedMatchesBytewiseAtEveryLengthAndSplit) {
  std::vector<uint8_t> data(300);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  for (std::size_t len = 0; len <= data.size(); len += 7) {
    const std::span<const uint8_t> all(data.data(), len);
    uint32_t r32 = 0xffffffffu;
    uint16_t r16 = 0xffff;
    for (std::size_t i = 0; i < len; ++i) {
      r32 = crc32_update(r32, all.subspan(i, 1));
      r16 = crc16_update(r16, all.subspan(i, 1));
    }
    EXPECT_EQ(crc32_update(0xffffffffu, all), r32) << len;
    EXPECT_EQ(crc16_update(0xffff, all), r16) << len;
    const std::size_t cut = len / 3;
    EXPECT_EQ(crc32_update(crc32_update(0xffffffffu, all.first(cut)), all.subspan(cut)), r32);
  }
}

// Long buffers take the carry-less-multiply path where the CPU has one.
TEST(wire_Crc, LongBuffersMatchBytewise) {
  std::vector<uint8_t> data(kMaxPacketSize);
  uint32_t x = 12345;
  for (auto& b : data) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 24);
  }
  for (std::size_t len : {63u, 64u, 127u, 128u, 129u, 143u, 191u, 192u, 255u, 256u, 1000u, 4096u,
                          4133u, 8190u}) {
    const std::span<const uint8_t> all(data.data(), len);
    for (uint32_t preset : {0xffffffffu, 0u, 0x12345678u}) {
      uint32_t r32 = preset;
      uint16_t r16 = static_cast<uint16_t>(preset);
      for (std::size_t i = 0; i < len; ++i) {
        r32 = crc32_update(r32, all.subspan(i, 1));
        r16 = crc16_update(r16, all.subspan(i, 1));
      }
      EXPECT_EQ(crc32_update(preset, all), r32) << len;
      EXPECT_EQ(crc16_update(static_cast<uint16_t>(preset), all), r16) << len;
    }
  }
}

TEST(wire_Crc, KnownPacketsCarryTheirCrcsLowByteFirst) {
  using namespace testing;
  const std::span<const uint8_t> g(kGlobalUdPacket);
  EXPECT_EQ(compute_icrc(g.first(g.size() - 6)), kGlobalUdIcrc);
  EXPECT_EQ(compute_vcrc(g.first(g.size() - 2)), kGlobalUdVcrc);
  EXPECT_EQ(g[g.size() - 6], kGlobalUdIcrc & 0xff);
  EXPECT_EQ(g[g.size() - 2], kGlobalUdVcrc & 0xff);
  EXPECT_TRUE(icrc_ok(g));
  EXPECT_TRUE(vcrc_ok(g));
  const std::span<const uint8_t> l(kLocalRcPacket);
  EXPECT_EQ(compute_icrc(l.first(l.size() - 6)), kLocalRcIcrc);
  EXPECT_EQ(compute_vcrc(l.first(l.size() - 2)), kLocalRcVcrc);
}

// Changing a variant field keeps the ICRC; changing any other bit breaks it.
TEST(wire_Crc, IcrcMasksExactlyTheVariantFields) {
  using namespace testing;
  auto icrc_of = [](std::span<const uint8_t> wire) { return compute_icrc(wire.first(wire.size() - 6)); };

  auto local = kLocalRcPacket;
  for (std::size_t byte = 0; byte + 6 < local.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto p = local;
      p[byte] ^= static_cast<uint8_t>(1 << bit);
      const bool variant = (byte == 0 && bit >= 4) || byte == 8 + 4;  // VL, Resv8a
      EXPECT_EQ(icrc_of(p) == kLocalRcIcrc, variant) << "byte " << byte << " bit " << bit;
    }
  }
  auto global = kGlobalUdPacket;
  for (std::size_t byte = 0; byte + 6 < global.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto p = global;
      p[byte] ^= static_cast<uint8_t>(1 << bit);
      if (byte == 1 && bit < 2) continue;  // LNH: changes the packet type, hence the mask
      const bool variant = byte < 8 ||                       // whole LRH
                           (byte == 8 && bit < 4) ||         // TClass 7:4
                           byte == 9 || byte == 10 || byte == 11 ||  // TClass, FlowLabel
                           byte == 15 ||                     // HopLmt
                           byte == 48 + 4;                   // BTH Resv8a
      EXPECT_EQ(icrc_of(p) == kGlobalUdIcrc, variant) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(wire_Crc, SealAndResealWriteTheLastSixBytes) {
  auto p = testing::kGlobalUdPacket;
  std::memset(p.data() + p.size() - 6, 0, 6);
  seal_crcs(p);
  EXPECT_EQ(p, testing::kGlobalUdPacket);
  p[0] = 0x70;  // VL 7: the VCRC breaks, the ICRC holds
  EXPECT_FALSE(vcrc_ok(p));
  EXPECT_TRUE(icrc_ok(p));
  reseal_vcrc(p);
  EXPECT_TRUE(vcrc_ok(p));
  std::array<uint8_t, 3> tiny{};
  seal_crcs(tiny);  // too short: untouched, no overrun
  EXPECT_FALSE(icrc_ok(tiny));
  EXPECT_FALSE(vcrc_ok(std::span<const uint8_t>(tiny).first(1)));
}

TEST(wire_Crc, ShortSpansAreMaskedAsFarAsTheyGo) {
  const std::array<uint8_t, 3> three = {0x00, 0x03, 0x01};
  EXPECT_EQ(compute_icrc(three), compute_icrc(std::array<uint8_t, 3>{0xff, 0xff, 0xff}));
  EXPECT_EQ(compute_icrc(std::span<const uint8_t>()), 0u);
}

}  // namespace
}  // namespace ibfab::wire
