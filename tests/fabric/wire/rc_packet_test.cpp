// Every RC, UC and XRC opcode through pack_packet() and parse_packet(): the
// extension headers each one carries, in the IBTA order, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "fabric/wire/crc.h"
#include "fabric/wire/packet_codec.h"
#include "tests/fabric/wire/rc_sample_headers.h"
#include "tests/fabric/wire/sample_packets.h"

namespace ibfab::wire {
namespace {

using namespace testing;

// The extension headers of an opcode in wire order, one letter each:
// X XRCETH, R RETH, A AtomicETH, K AETH, Q AtomicAckETH, I ImmDt, V IETH.
struct OpcodeHeaders {
  uint8_t opcode;
  std::string headers;
};

// IBTA Vol 1 Table 35 (OpCode field), written out by hand for RC; UC has the
// SEND and RDMA WRITE rows; XRC has all the RC rows, with an XRCETH first
// on every request (not on READ responses and acknowledges).
std::vector<OpcodeHeaders> opcode_table() {
  const std::vector<OpcodeHeaders> rc = {
      {0x00, ""},  {0x01, ""},   {0x02, ""},  {0x03, "I"}, {0x04, ""},  {0x05, "I"},
      {0x06, "R"}, {0x07, ""},   {0x08, ""},  {0x09, "I"}, {0x0a, "R"}, {0x0b, "RI"},
      {0x0c, "R"}, {0x0d, "K"},  {0x0e, ""},  {0x0f, "K"}, {0x10, "K"}, {0x11, "K"},
      {0x12, "KQ"}, {0x13, "A"}, {0x14, "A"}, {0x16, "V"}, {0x17, "V"}};
  std::vector<OpcodeHeaders> all = rc;
  for (const auto& e : rc)
    if (e.opcode <= 0x0b) all.push_back({static_cast<uint8_t>(0x20 | e.opcode), e.headers});
  for (const auto& e : rc) {
    const bool response = e.opcode >= 0x0d && e.opcode <= 0x12;
    all.push_back({static_cast<uint8_t>(0xa0 | e.opcode), response ? e.headers : "X" + e.headers});
  }
  return all;
}

std::vector<uint8_t> bytes_of(char header) {
  auto v = [](const auto& a) { return std::vector<uint8_t>(a.begin(), a.end()); };
  switch (header) {
    case 'X': return v(kXrcethBytes);
    case 'R': return v(kRethBytes);
    case 'A': return v(kAtomicEthBytes);
    case 'K': return v(kAethBytes);
    case 'Q': return v(kAtomicAckEthBytes);
    case 'I': return v(kImmediateBytes);
    case 'V': return v(kIethBytes);
  }
  ADD_FAILURE() << "unknown header " << header;
  return {};
}

// A spec for `e`, its headers set from the sample values (not from
// opcode_layout), with or without a GRH.
PacketSpec spec_for(const OpcodeHeaders& e, bool global) {
  PacketSpec s = local_rc_spec();
  if (global) s.grh = global_ud_spec().grh;
  s.bth.opcode = e.opcode;
  s.payload = std::span<const uint8_t>(kNine).first(5);
  for (char h : e.headers) {
    switch (h) {
      case 'X': s.xrc_srqn = kXrcSrqn; break;
      case 'R': s.reth = kReth; break;
      case 'A': s.atomic_eth = kAtomicEth; break;
      case 'K': s.aeth = kAeth; break;
      case 'Q': s.atomic_ack_eth = kAtomicAckEth; break;
      case 'I': s.immediate = kImmediate; break;
      case 'V': s.invalidate_rkey = kInvalidateRkey; break;
    }
  }
  return s;
}

TEST(wire_RcPacket, EveryOpcodeRoundTripsWithItsHeadersInIbtaOrder) {
  const auto table = opcode_table();
  ASSERT_EQ(table.size(), 23u + 12u + 23u);
  std::size_t index = 0;
  for (const OpcodeHeaders& e : table) {
    const bool global = index++ % 2 == 1;
    SCOPED_TRACE(::testing::Message() << "opcode 0x" << std::hex << int{e.opcode} << " headers '"
                                      << e.headers << "'" << (global ? " with GRH" : ""));
    const PacketSpec s = spec_for(e, global);
    std::array<uint8_t, 256> out{};
    const std::size_t n = pack_packet(out, s);
    ASSERT_NE(n, 0u);
    EXPECT_EQ(n, packet_size(global, opcode_layout(e.opcode), 5));

    // The bytes between the BTH and the payload: the headers, concatenated.
    std::vector<uint8_t> want;
    std::vector<std::size_t> at;  // offset of each header
    const std::size_t ext_at = Lrh::kSize + (global ? Grh::kSize : 0) + Bth::kSize;
    for (char h : e.headers) {
      at.push_back(ext_at + want.size());
      const auto b = bytes_of(h);
      want.insert(want.end(), b.begin(), b.end());
    }
    ASSERT_EQ(n, ext_at + want.size() + 8 + 6);  // payload 5 + pad 3, ICRC, VCRC
    EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + static_cast<std::ptrdiff_t>(ext_at)));
    EXPECT_EQ(out[ext_at - Bth::kSize], e.opcode);
    EXPECT_TRUE(std::equal(s.payload.begin(), s.payload.end(),
                           out.begin() + static_cast<std::ptrdiff_t>(ext_at + want.size())));

    const ParsedPacket p = parse_packet(std::span<const uint8_t>(out).first(n));
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_EQ(p.bth.psn, s.bth.psn);
    EXPECT_EQ(p.bth.dest_qp, s.bth.dest_qp);
    EXPECT_FALSE(p.deth.has_value());
    EXPECT_EQ(p.xrc_srqn, s.xrc_srqn);
    EXPECT_EQ(p.reth, s.reth);
    EXPECT_EQ(p.atomic_eth, s.atomic_eth);
    EXPECT_EQ(p.aeth, s.aeth);
    EXPECT_EQ(p.atomic_ack_eth, s.atomic_ack_eth);
    EXPECT_EQ(p.immediate, s.immediate);
    EXPECT_EQ(p.invalidate_rkey, s.invalidate_rkey);
    for (std::size_t i = 0; i < e.headers.size(); ++i) {
      const std::size_t got = e.headers[i] == 'X'   ? p.xrceth_offset
                              : e.headers[i] == 'R' ? p.reth_offset
                              : e.headers[i] == 'A' ? p.atomic_eth_offset
                              : e.headers[i] == 'K' ? p.aeth_offset
                              : e.headers[i] == 'Q' ? p.atomic_ack_eth_offset
                              : e.headers[i] == 'I' ? p.immediate_offset
                                                    : p.ieth_offset;
      EXPECT_EQ(got, at[i]) << "header " << e.headers[i];
    }
    // OpcodeLayout's offsets agree.
    const OpcodeLayout& l = p.layout;
    if (l.xrceth) EXPECT_EQ(p.xrceth_offset, ext_at + l.before_xrceth());
    if (l.reth) EXPECT_EQ(p.reth_offset, ext_at + l.before_reth());
    if (l.atomic_eth) EXPECT_EQ(p.atomic_eth_offset, ext_at + l.before_atomic_eth());
    if (l.aeth) EXPECT_EQ(p.aeth_offset, ext_at + l.before_aeth());
    if (l.atomic_ack_eth) EXPECT_EQ(p.atomic_ack_eth_offset, ext_at + l.before_atomic_ack_eth());
    if (l.immediate) EXPECT_EQ(p.immediate_offset, ext_at + l.before_immediate());
    if (l.ieth) EXPECT_EQ(p.ieth_offset, ext_at + l.before_ieth());
    EXPECT_EQ(p.payload_offset, ext_at + want.size());
    EXPECT_EQ(l.ext_size(), want.size());
    ASSERT_EQ(p.payload.size(), 5u);
    EXPECT_TRUE(std::equal(p.payload.begin(), p.payload.end(), s.payload.begin()));
  }
}

TEST(wire_RcPacket, OpcodesOutsideTheTableAreInvalid) {
  const auto table = opcode_table();
  for (int op = 0; op < 0x100; ++op) {
    const uint8_t t = op & opcode::kTransportMask;
    if (t != opcode::kRc && t != opcode::kUc && t != opcode::kXrc) continue;
    const bool listed = std::any_of(table.begin(), table.end(),
                                    [&](const OpcodeHeaders& e) { return e.opcode == op; });
    EXPECT_EQ(opcode_layout(static_cast<uint8_t>(op)).valid, listed) << "opcode " << op;
  }
}

// Each header kind, present or absent in a spec.
void toggle(PacketSpec& s, char h) {
  switch (h) {
    case 'D': s.deth = s.deth ? std::nullopt : std::optional<Deth>(Deth{1, 2}); break;
    case 'X': s.xrc_srqn = s.xrc_srqn ? std::nullopt : std::optional<uint32_t>(kXrcSrqn); break;
    case 'R': s.reth = s.reth ? std::nullopt : std::optional<Reth>(kReth); break;
    case 'A': s.atomic_eth = s.atomic_eth ? std::nullopt : std::optional<AtomicEth>(kAtomicEth); break;
    case 'K': s.aeth = s.aeth ? std::nullopt : std::optional<Aeth>(kAeth); break;
    case 'Q':
      s.atomic_ack_eth = s.atomic_ack_eth ? std::nullopt : std::optional<AtomicAckEth>(kAtomicAckEth);
      break;
    case 'I': s.immediate = s.immediate ? std::nullopt : std::optional<uint32_t>(kImmediate); break;
    case 'V':
      s.invalidate_rkey = s.invalidate_rkey ? std::nullopt : std::optional<uint32_t>(kInvalidateRkey);
      break;
  }
}

TEST(wire_RcPacket, PackRefusesAMissingOrExtraHeader) {
  std::array<uint8_t, 256> out{};
  for (const OpcodeHeaders& e : opcode_table()) {
    const PacketSpec good = spec_for(e, false);
    ASSERT_NE(pack_packet(out, good), 0u) << "opcode " << int{e.opcode};
    for (char h : std::string("DXRAKQIV")) {
      PacketSpec s = good;
      toggle(s, h);
      EXPECT_EQ(pack_packet(out, s), 0u) << "opcode " << int{e.opcode} << " toggled " << h;
      EXPECT_EQ(pack_packet_unsealed(out, s), 0u) << "opcode " << int{e.opcode} << " toggled " << h;
    }
  }
  // RD packets parse but cannot be packed: PacketSpec has no RDETH.
  PacketSpec rd = local_rc_spec();
  rd.bth.opcode = 0x44;
  rd.deth = Deth{1, 2};
  EXPECT_EQ(pack_packet(out, rd), 0u);
}

// An RC SEND Only whose payload is 4 bytes shorter than the headers of
// another opcode, relabelled as that opcode: the packet ends inside its
// headers. With the payload as long as the headers, it parses.
TEST(wire_RcPacket, TruncatedHeadersAreRefused) {
  const std::array<uint8_t, 64> filler{};
  for (const OpcodeHeaders& e : opcode_table()) {
    const std::size_t need = opcode_layout(e.opcode).ext_size();
    if (need == 0) continue;
    for (std::size_t len : {need - 4, need}) {
      PacketSpec s = local_rc_spec();
      s.payload = std::span<const uint8_t>(filler).first(len);
      std::array<uint8_t, 128> out{};
      const std::size_t n = pack_packet(out, s);
      ASSERT_NE(n, 0u);
      std::vector<uint8_t> p(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
      p[Lrh::kSize] = e.opcode;
      seal_crcs(p);
      const ParsedPacket parsed = parse_packet(p);
      if (len < need)
        EXPECT_EQ(parsed.error, PacketError::kTruncatedHeaders) << "opcode " << int{e.opcode};
      else
        EXPECT_TRUE(parsed.ok()) << "opcode " << int{e.opcode} << ": " << parsed.message();
    }
  }
}

}  // namespace
}  // namespace ibfab::wire
