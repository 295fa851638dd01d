// Byte offsets of every transport header, pinned to the IBTA tables.
#include <gtest/gtest.h>

#include <array>

#include "fabric/wire/bth.h"
#include "fabric/wire/deth.h"
#include "fabric/wire/grh.h"
#include "fabric/wire/lrh.h"
#include "fabric/wire/mad_header.h"
#include "fabric/wire/rmpp_header.h"
#include "fabric/wire/sa_header.h"
#include "tests/fabric/wire/header_bytes.h"

namespace ibfab::wire {
namespace {

using testing::packed;
using testing::unpacked;

TEST(wire_Lrh, FieldsSitAtTheirIbtaOffsets) {
  Lrh h;
  h.vl = 0xa;
  h.lver = 0x0;
  h.sl = 0x9;
  h.lnh = Lrh::kLnhIbaGlobal;
  h.dlid = 0xc001;
  h.pkt_len = 0x5a5;
  h.slid = 0x1234;
  const auto b = packed<Lrh, Lrh::kSize>(h);
  EXPECT_EQ(b[0], 0xa0);  // VL 7:4, LVer 3:0
  EXPECT_EQ(b[1], 0x93);  // SL 7:4, rsv 3:2, LNH 1:0
  EXPECT_EQ(load_be16(&b[Lrh::kDlidOffset]), 0xc001);
  EXPECT_EQ(b[4], 0x05);  // rsv 15:11 zero, PktLen 10:0
  EXPECT_EQ(b[5], 0xa5);
  EXPECT_EQ(load_be16(&b[Lrh::kSlidOffset]), 0x1234);
  EXPECT_EQ((unpacked<Lrh, Lrh::kSize>(b)), h);
}

TEST(wire_Lrh, ReservedBitsAreIgnoredAndShortInputFails) {
  std::array<uint8_t, 8> b = {0x1f, 0x0e, 0, 1, 0xf8, 0x03, 0, 2};
  const Lrh h = unpacked<Lrh, 8>(b);
  EXPECT_EQ(h.vl, 1);
  EXPECT_EQ(h.lver, 0xf);
  EXPECT_EQ(h.lnh, 2);
  EXPECT_EQ(h.pkt_len, 3);
  std::array<uint8_t, 7> short_buf{};
  Reader r(short_buf);
  EXPECT_FALSE(Lrh::unpack(r).has_value());
  EXPECT_TRUE(is_multicast_lid(0xc001));
  EXPECT_FALSE(is_multicast_lid(0xffff));
  EXPECT_FALSE(is_multicast_lid(0xbfff));
}

TEST(wire_Grh, FieldsSitAtTheirIbtaOffsets) {
  Grh h;
  h.tclass = 0xab;
  h.flow_label = 0xcdef1;
  h.pay_len = 0x0123;
  h.hop_limit = 0x7f;
  h.sgid = Gid::from(0xfe80000000000000ULL, 0x1122334455667788ULL);
  h.dgid = *Gid::parse("ff12:401b:ffff::ffff:ffff");
  const auto b = packed<Grh, Grh::kSize>(h);
  EXPECT_EQ(b[0], 0x6a);  // IPVer 6, TClass 7:4
  EXPECT_EQ(b[1], 0xbc);  // TClass 3:0, FlowLabel 19:16
  EXPECT_EQ(b[2], 0xde);
  EXPECT_EQ(b[3], 0xf1);
  EXPECT_EQ(load_be16(&b[4]), 0x0123);
  EXPECT_EQ(b[6], 0x1b);
  EXPECT_EQ(b[7], 0x7f);
  EXPECT_EQ(b[8], 0xfe);
  EXPECT_EQ(b[23], 0x88);
  EXPECT_EQ(b[24], 0xff);
  EXPECT_EQ(b[25], 0x12);
  EXPECT_EQ(b[39], 0xff);
  EXPECT_EQ((unpacked<Grh, Grh::kSize>(b)), h);
}

TEST(wire_Bth, FieldsSitAtTheirIbtaOffsets) {
  Bth h;
  h.opcode = opcode::kUdSendOnlyWithImmediate;
  h.solicited_event = true;
  h.mig_req = false;
  h.pad_count = 2;
  h.tver = 0;
  h.pkey = 0x7fff;
  h.fecn = false;
  h.becn = true;
  h.dest_qp = 0xabcdef;
  h.ack_req = true;
  h.psn = 0x123456;
  const auto b = packed<Bth, Bth::kSize>(h);
  EXPECT_EQ(b[0], 0x65);
  EXPECT_EQ(b[1], 0xa0);  // SE, !M, PadCnt 2, TVer 0
  EXPECT_EQ(load_be16(&b[2]), 0x7fff);
  EXPECT_EQ(b[Bth::kResv8aOffset], 0x40);  // F 7, B 6
  EXPECT_EQ(b[5], 0xab);
  EXPECT_EQ(b[6], 0xcd);
  EXPECT_EQ(b[7], 0xef);
  EXPECT_EQ(b[8], 0x80);  // A 7
  EXPECT_EQ(b[9], 0x12);
  EXPECT_EQ(b[11], 0x56);
  EXPECT_EQ((unpacked<Bth, Bth::kSize>(b)), h);
  h.mig_req = true;
  h.fecn = true;
  h.tver = 0xf;
  h.pad_count = 3;
  const auto b2 = packed<Bth, Bth::kSize>(h);
  EXPECT_EQ(b2[1], 0xff);
  EXPECT_EQ(b2[4], 0xc0);
  EXPECT_EQ((unpacked<Bth, Bth::kSize>(b2)), h);
}

TEST(wire_Bth, OpcodeTableMatchesIbta) {
  const OpcodeLayout ud = opcode_layout(opcode::kUdSendOnly);
  EXPECT_TRUE(ud.valid && ud.deth && !ud.immediate);
  EXPECT_EQ(ud.ext_size(), 8u);
  const OpcodeLayout udi = opcode_layout(opcode::kUdSendOnlyWithImmediate);
  EXPECT_TRUE(udi.valid && udi.deth && udi.immediate);
  EXPECT_EQ(udi.ext_size(), 12u);
  EXPECT_EQ(udi.before_immediate(), 8u);
  EXPECT_FALSE(opcode_layout(0x60).valid);  // UD SEND_FIRST does not exist
  EXPECT_EQ(opcode_layout(opcode::kRcSendOnly).ext_size(), 0u);
  EXPECT_EQ(opcode_layout(0x0b).ext_size(), 20u);  // RC RDMA WRITE Only w/ Imm: RETH + ImmDt
  EXPECT_EQ(opcode_layout(0x12).ext_size(), 12u);  // RC ATOMIC Ack: AETH + AtomicAckETH
  EXPECT_EQ(opcode_layout(0x13).ext_size(), 28u);  // RC CmpSwap: AtomicETH
  EXPECT_EQ(opcode_layout(0x17).ext_size(), 4u);   // RC SEND Only w/ Inv: IETH
  EXPECT_FALSE(opcode_layout(0x15).valid);
  EXPECT_FALSE(opcode_layout(0x2c).valid);  // UC has no RDMA READ
  EXPECT_EQ(opcode_layout(0x44).ext_size(), 12u);  // RD SEND Only: RDETH + DETH
  EXPECT_EQ(opcode_layout(0x44).before_deth(), 4u);
  EXPECT_EQ(opcode_layout(0xa4).ext_size(), 4u);   // XRC SEND Only: XRCETH
  EXPECT_EQ(opcode_layout(0xb1).ext_size(), 4u);   // XRC Ack: AETH only
  EXPECT_TRUE(opcode_layout(0x80).valid);          // CNP
  EXPECT_FALSE(opcode_layout(0x81).valid);
  EXPECT_FALSE(opcode_layout(0xc4).valid);         // manufacturer-specific
}

TEST(wire_Deth, FieldsSitAtTheirIbtaOffsets) {
  const Deth h{0x80010000, 0x000001};
  const auto b = packed<Deth, Deth::kSize>(h);
  EXPECT_EQ(load_be32(&b[0]), 0x80010000u);
  EXPECT_EQ(b[4], 0);
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(b[7], 1);
  EXPECT_EQ((unpacked<Deth, Deth::kSize>(b)), h);
}

TEST(wire_MadHeader, FieldsSitAtTheirIbtaOffsets) {
  MadHeader h;
  h.mgmt_class = mgmt_class::kSubnAdm;
  h.class_version = 2;
  h.method = mad_method::kGetTableResp;
  h.status = mad_status::kSaNoRecords | mad_status::kRedirect;
  h.class_specific = 0x0a0b;
  h.tid = 0x1122334455667788ULL;
  h.attr_id = 0x0038;
  h.attr_mod = 0xdeadbeef;
  const auto b = packed<MadHeader, MadHeader::kSize>(h);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 0x03);
  EXPECT_EQ(b[2], 2);
  EXPECT_EQ(b[3], 0x92);
  EXPECT_EQ(load_be16(&b[4]), 0x0302);
  EXPECT_EQ(load_be16(&b[6]), 0x0a0b);
  EXPECT_EQ(load_be64(&b[8]), 0x1122334455667788ULL);
  EXPECT_EQ(load_be16(&b[16]), 0x0038);
  EXPECT_EQ(load_be16(&b[18]), 0);
  EXPECT_EQ(load_be32(&b[20]), 0xdeadbeefu);
  EXPECT_EQ((unpacked<MadHeader, MadHeader::kSize>(b)), h);
  EXPECT_TRUE(h.is_response());
  EXPECT_EQ(kMadSize, 256u);
  EXPECT_EQ(mad_status::kMethodAttrUnsupported, 0x000c);
  EXPECT_EQ(mad_status::kInvalidAttrValue, 0x001c);
}

TEST(wire_RmppHeader, FieldsSitAtTheirIbtaOffsets) {
  RmppHeader h;
  h.version = 1;
  h.type = RmppHeader::kTypeData;
  h.resp_time = 0x1f;
  h.flags = RmppHeader::kFlagActive | RmppHeader::kFlagFirst;
  h.status = 0;
  h.data1 = 1;
  h.data2 = 400;
  const auto b = packed<RmppHeader, RmppHeader::kSize>(h);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 1);
  EXPECT_EQ(b[2], 0xfb);  // RespTime 7:3, Flags 2:0
  EXPECT_EQ(load_be32(&b[4]), 1u);
  EXPECT_EQ(load_be32(&b[8]), 400u);
  EXPECT_EQ((unpacked<RmppHeader, RmppHeader::kSize>(b)), h);
  EXPECT_TRUE(h.active());
}

TEST(wire_SaHeader, FieldsSitAtTheirIbtaOffsets) {
  SaHeader h;
  h.sm_key = 0x0102030405060708ULL;
  h.attr_offset = 7;
  h.comp_mask = 0x8000000000010003ULL;
  const auto b = packed<SaHeader, SaHeader::kSize>(h);
  // Offsets relative to byte 36 of the MAD.
  EXPECT_EQ(load_be64(&b[0]), 0x0102030405060708ULL);
  EXPECT_EQ(load_be16(&b[44 - 36]), 7);
  EXPECT_EQ(load_be16(&b[46 - 36]), 0);
  EXPECT_EQ(load_be64(&b[48 - 36]), 0x8000000000010003ULL);
  EXPECT_EQ((unpacked<SaHeader, SaHeader::kSize>(b)), h);
  EXPECT_EQ(SaHeader::kOffset + SaHeader::kSize, SaHeader::kDataOffset);
  EXPECT_EQ(RmppHeader::kOffset + RmppHeader::kSize, SaHeader::kOffset);
}

}  // namespace
}  // namespace ibfab::wire
