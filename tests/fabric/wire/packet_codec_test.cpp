#include "fabric/wire/packet_codec.h"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fabric/wire/crc.h"
#include "tests/fabric/wire/sample_packets.h"

namespace ibfab::wire {
namespace {

using testing::global_ud_spec;
using testing::kGlobalUdPacket;
using testing::kLocalRcPacket;
using testing::local_rc_spec;

TEST(wire_PacketCodec, PacksTheKnownGlobalUdPacketByteForByte) {
  std::array<uint8_t, 128> out{};
  const std::size_t n = pack_packet(out, global_ud_spec());
  ASSERT_EQ(n, kGlobalUdPacket.size());
  EXPECT_TRUE(std::equal(kGlobalUdPacket.begin(), kGlobalUdPacket.end(), out.begin()));
}

TEST(wire_PacketCodec, PacksTheKnownLocalRcPacketByteForByte) {
  std::array<uint8_t, 64> out{};
  const std::size_t n = pack_packet(out, local_rc_spec());
  ASSERT_EQ(n, kLocalRcPacket.size());
  EXPECT_TRUE(std::equal(kLocalRcPacket.begin(), kLocalRcPacket.end(), out.begin()));
  EXPECT_EQ(load_be16(out.data() + Lrh::kDlidOffset), 7);
}

TEST(wire_PacketCodec, ParseIsTheInverseOfPack) {
  const auto spec = global_ud_spec();
  const ParsedPacket p = parse_packet(kGlobalUdPacket);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p.lrh.dlid, 0xc001);
  EXPECT_EQ(p.lrh.lnh, Lrh::kLnhIbaGlobal);
  EXPECT_EQ(p.lrh.pkt_len, 20);
  ASSERT_TRUE(p.grh.has_value());
  Grh g = *spec.grh;
  g.pay_len = 32;
  EXPECT_EQ(*p.grh, g);
  Bth b = spec.bth;
  b.pad_count = 2;
  EXPECT_EQ(p.bth, b);
  EXPECT_EQ(p.deth, spec.deth);
  EXPECT_FALSE(p.immediate.has_value());
  EXPECT_EQ(p.grh_offset, 8u);
  EXPECT_EQ(p.bth_offset, 48u);
  EXPECT_EQ(p.deth_offset, 60u);
  EXPECT_EQ(p.payload_offset, 68u);
  EXPECT_EQ(p.payload.size(), 6u);
  EXPECT_EQ(p.payload.data(), kGlobalUdPacket.data() + 68);
  EXPECT_EQ(p.icrc, testing::kGlobalUdIcrc);
  EXPECT_EQ(p.vcrc, testing::kGlobalUdVcrc);
  EXPECT_EQ(p.size, kGlobalUdPacket.size());
}

TEST(wire_PacketCodec, ImmediateAndEveryPadCountRoundTrip) {
  std::vector<uint8_t> payload(64);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(0xa0 + i);
  for (std::size_t len = 0; len <= 9; ++len) {
    for (bool with_grh : {false, true}) {
      PacketSpec s = global_ud_spec();
      if (!with_grh) s.grh.reset();
      s.bth.opcode = opcode::kUdSendOnlyWithImmediate;
      s.immediate = 0xfeedf00d;
      s.payload = std::span<const uint8_t>(payload).first(len);
      std::array<uint8_t, 256> out{};
      const std::size_t n = pack_packet(out, s);
      ASSERT_EQ(n % 4, 2u);
      ASSERT_EQ(n, packet_size(with_grh, opcode_layout(s.bth.opcode), len));
      const ParsedPacket p = parse_packet(std::span<const uint8_t>(out).first(n));
      ASSERT_TRUE(p.ok()) << p.message() << " len " << len;
      EXPECT_EQ(p.bth.pad_count, (4 - len % 4) % 4);
      EXPECT_EQ(p.immediate, 0xfeedf00du);
      EXPECT_EQ(p.immediate_offset, p.deth_offset + 8);
      EXPECT_EQ(load_be32(out.data() + p.immediate_offset), 0xfeedf00du);
      ASSERT_EQ(p.payload.size(), len);
      EXPECT_TRUE(std::equal(p.payload.begin(), p.payload.end(), payload.begin()));
      for (std::size_t i = 0; i < p.bth.pad_count; ++i) EXPECT_EQ(out[p.payload_offset + len + i], 0);
    }
  }
}

TEST(wire_PacketCodec, PackRejectsWhatItCannotRepresent) {
  std::array<uint8_t, 128> out{};
  PacketSpec s = global_ud_spec();
  EXPECT_EQ(pack_packet(std::span<uint8_t>(out).first(81), s), 0u);  // one byte short
  EXPECT_EQ(pack_packet(std::span<uint8_t>(out).first(82), s), 82u);
  s.deth.reset();  // UD needs a DETH
  EXPECT_EQ(pack_packet(out, s), 0u);
  s = global_ud_spec();
  s.immediate = 1;  // 0x64 carries no ImmDt
  EXPECT_EQ(pack_packet(out, s), 0u);
  s = local_rc_spec();
  s.bth.opcode = 0x0a;  // RDMA WRITE Only needs a RETH
  EXPECT_EQ(pack_packet(out, s), 0u);
  s.bth.opcode = 0x15;  // reserved
  EXPECT_EQ(pack_packet(out, s), 0u);
  std::vector<uint8_t> big(8200);
  std::vector<uint8_t> huge_out(9000);
  s = local_rc_spec();
  s.payload = big;
  EXPECT_EQ(pack_packet(huge_out, s), 0u);  // PktLen would overflow 11 bits
  s.payload = std::span<const uint8_t>(big).first(kMaxPacketSize - 26);
  EXPECT_EQ(pack_packet(huge_out, s), kMaxPacketSize);
  EXPECT_TRUE(parse_packet(std::span<const uint8_t>(huge_out).first(kMaxPacketSize)).ok());
}

// Each check of parse_packet(), with a packet that fails only that check.
class wire_PacketErrors : public ::testing::Test {
 protected:
  static std::vector<uint8_t> good() { return {kGlobalUdPacket.begin(), kGlobalUdPacket.end()}; }
  static PacketError error_of(std::vector<uint8_t> p, bool reseal = true) {
    if (reseal) seal_crcs(p);
    return parse_packet(p).error;
  }
};

TEST_F(wire_PacketErrors, EachCheckReportsItsOwnError) {
  EXPECT_EQ(error_of(good()), PacketError::kNone);
  EXPECT_EQ(parse_packet(std::span<const uint8_t>(kGlobalUdPacket).first(25)).error,
            PacketError::kTooShort);
  EXPECT_EQ(parse_packet({}).error, PacketError::kTooShort);

  auto p = good();
  p[0] |= 0x01;  // LVer 1
  EXPECT_EQ(error_of(p), PacketError::kBadLinkVersion);
  for (uint8_t lnh : {uint8_t{0}, uint8_t{1}}) {
    p = good();
    p[1] = lnh;
    EXPECT_EQ(error_of(p), PacketError::kUnsupportedLnh);
  }
  p = good();
  p[5] = 21;  // PktLen
  EXPECT_EQ(error_of(p), PacketError::kBadPktLen);
  p = good();
  p.push_back(0);
  EXPECT_EQ(error_of(p), PacketError::kBadPktLen);
  p = good();
  p[8] = 0x41;  // IPVer 4
  EXPECT_EQ(error_of(p), PacketError::kBadGrh);
  p = good();
  p[14] = 0x11;  // NxtHdr
  EXPECT_EQ(error_of(p), PacketError::kBadGrh);
  p = good();
  p[13] = 0x24;  // PayLen
  EXPECT_EQ(error_of(p), PacketError::kBadGrh);
  p = good();
  p[48] = 0x60;  // UD SEND_FIRST: reserved
  EXPECT_EQ(error_of(p), PacketError::kBadOpcode);
  p = good();
  p[48] = 0x13;  // RC CmpSwap: 28-byte AtomicETH, only 16 bytes before the ICRC
  EXPECT_EQ(error_of(p), PacketError::kTruncatedHeaders);
  p = good();
  p[48] = opcode::kUdSendOnlyWithImmediate;
  EXPECT_EQ(error_of(p), PacketError::kNone);  // "hell" is the ImmDt now, "o!" + pad the payload
}

TEST_F(wire_PacketErrors, PadCountLargerThanThePayload) {
  // A local UD packet whose payload is empty: PktLen covers LRH BTH DETH ICRC.
  PacketSpec s = global_ud_spec();
  s.grh.reset();
  s.payload = {};
  std::array<uint8_t, 64> out{};
  const std::size_t n = pack_packet(out, s);
  std::vector<uint8_t> p(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
  EXPECT_EQ(error_of(p), PacketError::kNone);
  p[9] = 0x10;  // PadCnt 1 with no payload bytes
  EXPECT_EQ(error_of(p), PacketError::kBadPadCount);
}

TEST_F(wire_PacketErrors, CrcMismatches) {
  auto p = good();
  p[70] ^= 0x01;  // payload bit: both CRCs break; the link-level VCRC is checked first
  EXPECT_EQ(error_of(p, false), PacketError::kVcrcMismatch);
  EXPECT_TRUE(parse_packet(p, /*check_crcs=*/false).ok());
  reseal_vcrc(p);
  EXPECT_EQ(error_of(p, false), PacketError::kIcrcMismatch);
  p = good();
  p.back() ^= 0x80;
  EXPECT_EQ(error_of(p, false), PacketError::kVcrcMismatch);
  for (auto e : {PacketError::kNone, PacketError::kTooShort, PacketError::kIcrcMismatch,
                 PacketError::kVcrcMismatch, PacketError::kBadPadCount}) {
    EXPECT_NE(std::string(to_string(e)), "unknown packet error");
  }
}

TEST(wire_PacketCodec, SetVlKeepsThePacketValid) {
  auto p = kLocalRcPacket;
  set_vl(p, 15);
  EXPECT_EQ(p[0] >> 4, 15);
  const ParsedPacket parsed = parse_packet(p);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed.lrh.vl, 15);
  EXPECT_EQ(parsed.icrc, testing::kLocalRcIcrc);
}

TEST(wire_PacketCodec, FuzzSeedsAreValidPackets) {
  std::size_t seeds = 0;
  OpcodeLayout seen;  // every extension header some seed carries
  for (const auto& entry : std::filesystem::directory_iterator(IBFAB_WIRE_SEED_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const ParsedPacket p = parse_packet(bytes);
    EXPECT_TRUE(p.ok()) << entry.path() << ": " << p.message();
    ++seeds;
    seen.deth |= p.layout.deth;
    seen.xrceth |= p.layout.xrceth;
    seen.reth |= p.layout.reth;
    seen.atomic_eth |= p.layout.atomic_eth;
    seen.aeth |= p.layout.aeth;
    seen.atomic_ack_eth |= p.layout.atomic_ack_eth;
    seen.immediate |= p.layout.immediate;
    seen.ieth |= p.layout.ieth;
  }
  EXPECT_GE(seeds, 5u);
  EXPECT_TRUE(seen.deth && seen.xrceth && seen.reth && seen.atomic_eth && seen.aeth &&
              seen.atomic_ack_eth && seen.immediate && seen.ieth);
}

}  // namespace
}  // namespace ibfab::wire
