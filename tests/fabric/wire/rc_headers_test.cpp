// The RC/UC/XRC extension headers (RETH, AtomicETH, AETH, AtomicAckETH)
// pinned to their IBTA layouts, the AETH syndrome helpers and the RNR NAK
// timer table.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <string>

#include "fabric/wire/aeth.h"
#include "fabric/wire/atomic_ack_eth.h"
#include "fabric/wire/atomic_eth.h"
#include "fabric/wire/reth.h"
#include "tests/fabric/wire/header_bytes.h"
#include "tests/fabric/wire/rc_sample_headers.h"

namespace ibfab::wire {
namespace {

using testing::packed;
using testing::unpacked;

TEST(wire_Reth, FieldsSitAtTheirIbtaOffsets) {
  EXPECT_EQ((packed<Reth, Reth::kSize>(testing::kReth)), testing::kRethBytes);
  EXPECT_EQ((unpacked<Reth, Reth::kSize>(testing::kRethBytes)), testing::kReth);
}

TEST(wire_AtomicEth, FieldsSitAtTheirIbtaOffsets) {
  EXPECT_EQ((packed<AtomicEth, AtomicEth::kSize>(testing::kAtomicEth)), testing::kAtomicEthBytes);
  EXPECT_EQ((unpacked<AtomicEth, AtomicEth::kSize>(testing::kAtomicEthBytes)), testing::kAtomicEth);
}

TEST(wire_AtomicAckEth, FieldsSitAtTheirIbtaOffsets) {
  EXPECT_EQ((packed<AtomicAckEth, AtomicAckEth::kSize>(testing::kAtomicAckEth)),
            testing::kAtomicAckEthBytes);
  EXPECT_EQ((unpacked<AtomicAckEth, AtomicAckEth::kSize>(testing::kAtomicAckEthBytes)),
            testing::kAtomicAckEth);
}

TEST(wire_Aeth, FieldsSitAtTheirIbtaOffsets) {
  EXPECT_EQ((packed<Aeth, Aeth::kSize>(testing::kAeth)), testing::kAethBytes);
  EXPECT_EQ((unpacked<Aeth, Aeth::kSize>(testing::kAethBytes)), testing::kAeth);
  // Syndrome bit 7 is reserved: packed as zero, ignored when unpacked; the
  // MSN is 24 bits.
  const std::array<uint8_t, 4> want = {0x03, 0x23, 0x45, 0x67};
  EXPECT_EQ((packed<Aeth, Aeth::kSize>(Aeth{0x83, 0x01234567})), want);
  const Aeth h = unpacked<Aeth, Aeth::kSize>(std::array<uint8_t, 4>{0xe4, 0xff, 0xff, 0xfe});
  EXPECT_EQ(h.syndrome, 0x64);
  EXPECT_EQ(h.msn, 0xfffffeu);
}

TEST(wire_RcHeaders, ShortInputFails) {
  const std::array<uint8_t, 27> bytes{};
  Reader r1(std::span<const uint8_t>(bytes).first(Reth::kSize - 1));
  EXPECT_FALSE(Reth::unpack(r1).has_value());
  Reader r2(bytes);
  EXPECT_FALSE(AtomicEth::unpack(r2).has_value());
  Reader r3(std::span<const uint8_t>(bytes).first(Aeth::kSize - 1));
  EXPECT_FALSE(Aeth::unpack(r3).has_value());
  Reader r4(std::span<const uint8_t>(bytes).first(AtomicAckEth::kSize - 1));
  EXPECT_FALSE(AtomicAckEth::unpack(r4).has_value());
}

TEST(wire_Aeth, SyndromeHelpers) {
  // ACK: 0 00 ccccc; the default credit count is 0x1f, "invalid".
  const Aeth ack = Aeth::ack(0x123456);
  EXPECT_EQ(ack.syndrome, 0x1f);
  EXPECT_EQ(ack.msn, 0x123456u);
  EXPECT_EQ(ack.kind(), AckKind::kAck);
  EXPECT_EQ(ack.value(), 0x1f);
  EXPECT_EQ(Aeth::ack(5, 3).syndrome, 0x03);
  EXPECT_EQ(Aeth::ack(0x1abcdef).msn, 0xabcdefu);  // 24 bits
  EXPECT_EQ(Aeth::ack(0, 0x25).syndrome, 0x05);    // the value is 5 bits

  // RNR NAK: 0 01 ttttt.
  const Aeth rnr = Aeth::rnr_nak(7, 14);
  EXPECT_EQ(rnr.syndrome, 0x2e);
  EXPECT_EQ(rnr.kind(), AckKind::kRnrNak);
  EXPECT_EQ(rnr.value(), 14);
  EXPECT_EQ(Aeth::rnr_nak(7, 0).syndrome, 0x20);

  // NAK: 0 11 nnnnn.
  const std::array<std::pair<NakCode, uint8_t>, 5> naks = {{
      {NakCode::kPsnSequenceError, 0x60},
      {NakCode::kInvalidRequest, 0x61},
      {NakCode::kRemoteAccessError, 0x62},
      {NakCode::kRemoteOperationalError, 0x63},
      {NakCode::kInvalidRdRequest, 0x64},
  }};
  for (const auto& [code, syndrome] : naks) {
    const Aeth n = Aeth::nak(9, code);
    EXPECT_EQ(n.syndrome, syndrome);
    EXPECT_EQ(n.kind(), AckKind::kNak);
    EXPECT_EQ(n.value(), static_cast<uint8_t>(code));
    EXPECT_EQ(n.msn, 9u);
  }

  // Kind 10 is reserved: none of the three.
  const Aeth reserved{0x45, 0};
  EXPECT_NE(reserved.kind(), AckKind::kAck);
  EXPECT_NE(reserved.kind(), AckKind::kRnrNak);
  EXPECT_NE(reserved.kind(), AckKind::kNak);
  EXPECT_EQ(static_cast<uint8_t>(reserved.kind()), 2);
  EXPECT_EQ(reserved.value(), 5);
}

// The RNR NAK timer encodings as the IBTA table lists them, in milliseconds.
TEST(wire_Aeth, RnrTimerTable) {
  const std::array<const char*, 32> ms = {
      "655.36", "0.01",  "0.02",  "0.03",  "0.04",   "0.06",   "0.08",   "0.12",
      "0.16",   "0.24",  "0.32",  "0.48",  "0.64",   "0.96",   "1.28",   "1.92",
      "2.56",   "3.84",  "5.12",  "7.68",  "10.24",  "15.36",  "20.48",  "30.72",
      "40.96",  "61.44", "81.92", "122.88", "163.84", "245.76", "327.68", "491.52"};
  for (uint8_t code = 0; code < 32; ++code) {
    // "a.bc" ms = abc * 10 us = abc * 10'000 ns.
    std::string digits = ms[code];
    digits.erase(digits.find('.'), 1);
    const uint64_t want_ns = std::strtoull(digits.c_str(), nullptr, 10) * 10'000;
    EXPECT_EQ(rnr_timer_ns(code), want_ns) << "code " << int{code} << " (" << ms[code] << " ms)";
    EXPECT_EQ(rnr_timer_ns(static_cast<uint8_t>(code | 0xe0)), want_ns) << "bits 7:5 are ignored";
  }
  EXPECT_EQ(rnr_timer_ns(0), 655'360'000u);
  EXPECT_EQ(rnr_timer_ns(1), 10'000u);
  EXPECT_EQ(rnr_timer_ns(31), 491'520'000u);
}

}  // namespace
}  // namespace ibfab::wire
