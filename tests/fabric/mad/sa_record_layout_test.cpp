// SA record byte offsets pinned by hand from the IBTA 1.3 tables (15.2.5,
// 13.4.8.3), masks and constants from the SA rulebook, round trips.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>

#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/sa_class_port_info.h"

namespace ibfab::mad {
namespace {

template <class T>
std::array<uint8_t, 256> packed(const T& v) {
  std::array<uint8_t, 256> buf{};
  v.pack(std::span<uint8_t>(buf).first(T::kSize));
  return buf;
}

template <class T>
T unpacked(const std::array<uint8_t, 256>& buf, std::size_t n = T::kSize) {
  return T::unpack(std::span<const uint8_t>(buf).first(n));
}

wire::Gid gid(const char* text) { return wire::Gid::parse(text).value(); }

McMemberRecord ipoib_broadcast_join() {
  McMemberRecord m;
  m.mgid = gid("ff12:401b:ffff::ffff:ffff");
  m.port_gid = gid("fe80::2:c903:0:1");
  m.q_key = 0x00000B1B;
  m.mlid = 0xC001;
  m.mtu_selector = selector::kExactly;
  m.mtu = mtu::k2048;
  m.tclass = 0x12;
  m.p_key = 0xFFFF;
  m.rate_selector = selector::kExactly;
  m.rate = 3;
  m.packet_life_time_selector = selector::kSmallest;
  m.packet_life_time = 0x12;
  m.sl = 0xA;
  m.flow_label = 0x12345;
  m.hop_limit = 0x40;
  m.scope = 2;
  m.join_state = join_state::kSendOnlyFull | join_state::kFull;
  m.proxy_join = true;
  return m;
}

TEST(McMemberRecordLayout, PinnedOffsets) {
  const auto b = packed(ipoib_broadcast_join());
  EXPECT_EQ(b[0], 0xFF);  // MGID: bytes 0-15
  EXPECT_EQ(b[1], 0x12);
  EXPECT_EQ(b[2], 0x40);
  EXPECT_EQ(b[15], 0xFF);
  EXPECT_EQ(b[16], 0xFE);  // PortGID: bytes 16-31
  EXPECT_EQ(b[31], 0x01);
  EXPECT_EQ(b[34], 0x0B);  // Q_Key: bytes 32-35
  EXPECT_EQ(b[35], 0x1B);
  EXPECT_EQ(b[36], 0xC0);  // MLID: bytes 36-37
  EXPECT_EQ(b[37], 0x01);
  EXPECT_EQ(b[38], 0x84);  // MTUSelector 7:6 = 2 | MTU 5:0 = 4
  EXPECT_EQ(b[39], 0x12);  // TClass
  EXPECT_EQ(b[40], 0xFF);  // P_Key: bytes 40-41
  EXPECT_EQ(b[41], 0xFF);
  EXPECT_EQ(b[42], 0x83);  // RateSelector 2 | Rate 3
  EXPECT_EQ(b[43], 0xD2);  // PacketLifeTimeSelector 3 | PacketLifeTime 0x12
  EXPECT_EQ(b[44], 0xA1);  // SL 31:28 | FlowLabel 27:8 ...
  EXPECT_EQ(b[45], 0x23);
  EXPECT_EQ(b[46], 0x45);
  EXPECT_EQ(b[47], 0x40);  // ... | HopLimit 7:0
  EXPECT_EQ(b[48], 0x29);  // Scope 7:4 | JoinState 3:0 (low nibble)
  EXPECT_EQ(b[49], 0x80);  // ProxyJoin: byte 49 bit 7
  EXPECT_EQ(b[50], 0x00);
  EXPECT_EQ(b[51], 0x00);
  EXPECT_EQ(b[52], 0x00);  // nothing past the record
}

TEST(McMemberRecordLayout, RoundTrip) {
  const McMemberRecord m = ipoib_broadcast_join();
  EXPECT_EQ(unpacked<McMemberRecord>(packed(m)), m);
}

TEST(McMemberRecordLayout, FieldsAreMaskedToTheirWidth) {
  McMemberRecord m;
  m.mtu_selector = 0xFF;
  m.mtu = 0xFF;
  m.sl = 0xFF;
  m.flow_label = 0xFFFFFFFF;
  m.join_state = 0xF2;  // only the low nibble belongs to JoinState
  const auto b = packed(m);
  EXPECT_EQ(b[38], 0xFF);
  EXPECT_EQ(b[44], 0xFF);
  EXPECT_EQ(b[45], 0xFF);
  EXPECT_EQ(b[46], 0xFF);
  EXPECT_EQ(b[47], 0x00);  // the flow label never spills into HopLimit
  EXPECT_EQ(b[48], 0x02);  // nor JoinState into Scope
  const auto back = unpacked<McMemberRecord>(b);
  EXPECT_EQ(back.mtu_selector, 3);
  EXPECT_EQ(back.mtu, 0x3F);
  EXPECT_EQ(back.flow_label, 0xFFFFFu);
  EXPECT_EQ(back.join_state, join_state::kNonMember);
}

TEST(McMemberRecordLayout, ReservedBitsAreIgnoredOnUnpack) {
  std::array<uint8_t, 256> b{};
  b[49] = 0x7F;  // ProxyJoin clear, reserved bits 6:0 set
  b[50] = b[51] = 0xFF;
  EXPECT_EQ(unpacked<McMemberRecord>(b), McMemberRecord{});
  b[49] = 0x01;  // where OpenSM's bit-field would put ProxyJoin
  EXPECT_FALSE(unpacked<McMemberRecord>(b).proxy_join);
}

TEST(McMemberRecordLayout, ShortSpanReadsZeros) {
  const auto b = packed(ipoib_broadcast_join());
  const auto m = unpacked<McMemberRecord>(b, 38);
  EXPECT_EQ(m.mlid, 0xC001);
  EXPECT_EQ(m.mtu, 0);
  EXPECT_EQ(m.join_state, 0);
}

TEST(McMemberRecordLayout, MasksAndConstants) {
  EXPECT_EQ(McMemberRecord::kAttributeOffset * 8u, 56u);
  EXPECT_EQ(mcm_comp::kJoinRequiredMask, 0x10003u);
  EXPECT_EQ(mcm_comp::kCreateRequiredMask, 0x130C7u);
  EXPECT_EQ(mcm_comp::kMlid, 0x8u);
  EXPECT_EQ(mcm_comp::kScope, 0x8000u);
  EXPECT_EQ(mcm_comp::kProxyJoin, 0x20000u);
  // rdma_cm's join mask (rulebook section 5).
  EXPECT_EQ(mcm_comp::kMgid | mcm_comp::kPortGid | mcm_comp::kPKey | mcm_comp::kJoinState |
                mcm_comp::kQKey | mcm_comp::kSl | mcm_comp::kFlowLabel | mcm_comp::kTClass,
            mcm_comp::kCreateRequiredMask);
  EXPECT_EQ(join_state::kFull | join_state::kNonMember | join_state::kSendOnlyNonMember |
                join_state::kSendOnlyFull,
            0xF);
  EXPECT_EQ(selector::kGreaterThan, 0);
  EXPECT_EQ(selector::kLessThan, 1);
  EXPECT_EQ(selector::kExactly, 2);
  EXPECT_EQ(selector::kLargest, 3);
}

PathRecord sample_path() {
  PathRecord p;
  p.service_id = 0x0000000001060000ull;
  p.dgid = gid("fe80::2:c903:0:2");
  p.sgid = gid("fe80::2:c903:0:1");
  p.dlid = 0x0012;
  p.slid = 0x0034;
  p.raw_traffic = true;
  p.flow_label = 0xABCDE;
  p.hop_limit = 0xFF;
  p.tclass = 0x56;
  p.reversible = true;
  p.numb_path = 0x7F;
  p.p_key = 0x8001;
  p.qos_class = 0xABC;
  p.sl = 0x5;
  p.mtu_selector = selector::kExactly;
  p.mtu = mtu::k4096;
  p.rate_selector = selector::kLargest;
  p.rate = 16;
  p.packet_life_time_selector = selector::kExactly;
  p.packet_life_time = 0x13;
  p.preference = 0x77;
  return p;
}

TEST(PathRecordLayout, PinnedOffsets) {
  const auto b = packed(sample_path());
  EXPECT_EQ(b[5], 0x06);  // ServiceID: bytes 0-7
  EXPECT_EQ(b[8], 0xFE);  // DGID: bytes 8-23
  EXPECT_EQ(b[23], 0x02);
  EXPECT_EQ(b[24], 0xFE);  // SGID: bytes 24-39
  EXPECT_EQ(b[39], 0x01);
  EXPECT_EQ(b[40], 0x00);  // DLID: bytes 40-41
  EXPECT_EQ(b[41], 0x12);
  EXPECT_EQ(b[42], 0x00);  // SLID: bytes 42-43
  EXPECT_EQ(b[43], 0x34);
  EXPECT_EQ(b[44], 0x8A);  // RawTraffic 31 | reserved 30:28 | FlowLabel 27:8 ...
  EXPECT_EQ(b[45], 0xBC);
  EXPECT_EQ(b[46], 0xDE);
  EXPECT_EQ(b[47], 0xFF);  // ... | HopLimit
  EXPECT_EQ(b[48], 0x56);  // TClass
  EXPECT_EQ(b[49], 0xFF);  // Reversible 7 | NumbPath 6:0
  EXPECT_EQ(b[50], 0x80);  // P_Key: bytes 50-51
  EXPECT_EQ(b[51], 0x01);
  EXPECT_EQ(b[52], 0xAB);  // QoSClass 15:4 | SL 3:0
  EXPECT_EQ(b[53], 0xC5);
  EXPECT_EQ(b[54], 0x85);  // MTU: MTUSelector 2 | 4096
  EXPECT_EQ(b[55], 0xD0);  // Rate: RateSelector 3 | 16 (100 Gb/s)
  EXPECT_EQ(b[56], 0x93);  // PacketLifeTimeSelector 2 | 0x13
  EXPECT_EQ(b[57], 0x77);  // Preference
  for (std::size_t i = 58; i < 64; ++i) EXPECT_EQ(b[i], 0) << "reserved byte " << i;
}

TEST(PathRecordLayout, RoundTripAndMasking) {
  const PathRecord p = sample_path();
  EXPECT_EQ(unpacked<PathRecord>(packed(p)), p);

  PathRecord q;
  q.numb_path = 0xFF;   // 7 bits: must not set Reversible
  q.flow_label = 0xFFFFFFFF;
  q.qos_class = 0xFFFF;  // 12 bits: must not spill into SL
  const auto b = packed(q);
  EXPECT_EQ(b[44], 0x0F);  // RawTraffic and the reserved bits stay clear
  EXPECT_EQ(b[49], 0x7F);
  EXPECT_EQ(b[53], 0xF0);
  std::array<uint8_t, 256> reserved{};
  reserved[44] = 0x70;
  std::fill(reserved.begin() + 58, reserved.begin() + 64, uint8_t{0xFF});
  EXPECT_EQ(unpacked<PathRecord>(reserved), PathRecord{});
}

TEST(PathRecordLayout, ComponentMaskBits) {
  EXPECT_EQ(PathRecord::kAttributeOffset * 8u, PathRecord::kSize);
  EXPECT_EQ(pr_comp::kServiceId, 0x3u);
  EXPECT_EQ(pr_comp::kDgid, 1u << 2);
  EXPECT_EQ(pr_comp::kSgid, 1u << 3);
  EXPECT_EQ(pr_comp::kDlid, 1u << 4);
  EXPECT_EQ(pr_comp::kSlid, 1u << 5);
  EXPECT_EQ(pr_comp::kFlowLabel, 1u << 8);
  EXPECT_EQ(pr_comp::kHopLimit, 1u << 9);
  EXPECT_EQ(pr_comp::kTClass, 1u << 10);
  EXPECT_EQ(pr_comp::kReversible, 1u << 11);
  EXPECT_EQ(pr_comp::kNumbPath, 1u << 12);
  EXPECT_EQ(pr_comp::kPKey, 1u << 13);
  EXPECT_EQ(pr_comp::kQosClass, 1u << 14);
  EXPECT_EQ(pr_comp::kSl, 1u << 15);
  EXPECT_EQ(pr_comp::kMtuSelector | pr_comp::kMtu, 0x30000u);
  EXPECT_EQ(pr_comp::kRateSelector | pr_comp::kRate, 0xC0000u);
  EXPECT_EQ(pr_comp::kPacketLifeTimeSelector | pr_comp::kPacketLifeTime, 0x300000u);
  EXPECT_EQ(pr_comp::kPreference, 1u << 22);
}

TEST(NodeRecordLayout, PinnedOffsetsAndRoundTrip) {
  NodeRecord n;
  n.lid = 0x0ABC;
  n.node_info.node_type = NodeInfo::kTypeSwitch;
  n.node_info.num_ports = 36;
  n.node_info.node_guid = 0x0002C90300000001ull;
  n.node_info.vendor_id = 0x0002C9;
  n.node_description.text = "ibfab sw-1";
  const auto b = packed(n);
  EXPECT_EQ(b[0], 0x0A);  // LID: bytes 0-1
  EXPECT_EQ(b[1], 0xBC);
  EXPECT_EQ(b[2], 0x00);  // reserved
  EXPECT_EQ(b[3], 0x00);
  EXPECT_EQ(b[4], 1);     // NodeInfo at 4: BaseVersion
  EXPECT_EQ(b[6], NodeInfo::kTypeSwitch);
  EXPECT_EQ(b[7], 36);
  EXPECT_EQ(b[16], 0x00);  // NodeGUID at 4 + 12
  EXPECT_EQ(b[17], 0x02);
  EXPECT_EQ(b[23], 0x01);
  EXPECT_EQ(b[41], 0x00);  // VendorID at 4 + 37
  EXPECT_EQ(b[42], 0x02);
  EXPECT_EQ(b[43], 0xC9);
  EXPECT_EQ(b[44], 'i');  // NodeDescription at 44
  EXPECT_EQ(b[53], '1');
  EXPECT_EQ(b[54], 0);
  EXPECT_EQ(NodeRecord::kAttributeOffset * 8u, 112u);
  EXPECT_EQ(unpacked<NodeRecord>(b), n);
  EXPECT_EQ(nr_comp::kLid, 1u);
  EXPECT_EQ(nr_comp::kNodeGuid, 1u << 7);
  EXPECT_EQ(nr_comp::kNodeDescription, 1u << 14);
}

TEST(NodeRecordLayout, ShortSpanReadsZeros) {
  NodeRecord n;
  n.lid = 9;
  n.node_info.port_guid = 0x1234;
  n.node_description.text = "x";
  const auto b = packed(n);
  const NodeRecord m = unpacked<NodeRecord>(b, 2);
  EXPECT_EQ(m.lid, 9);
  EXPECT_EQ(m.node_info.base_version, 0);  // past the span: zero, not the default 1
  EXPECT_EQ(m.node_info.port_guid, 0u);
  EXPECT_TRUE(m.node_description.text.empty());
}

TEST(PortInfoRecordLayout, PinnedOffsetsAndRoundTrip) {
  PortInfoRecord r;
  r.endport_lid = 0x0102;
  r.port_num = 3;
  r.options = 0x80;
  r.port_info.lid = 0x0102;
  r.port_info.capability_mask = port_cap::kIsSM;
  r.port_info.port_state = port_state::kActive;
  const auto b = packed(r);
  EXPECT_EQ(b[0], 0x01);  // EndportLID: bytes 0-1
  EXPECT_EQ(b[1], 0x02);
  EXPECT_EQ(b[2], 3);     // PortNum
  EXPECT_EQ(b[3], 0x80);  // Options
  EXPECT_EQ(b[20], 0x01);  // PortInfo at 4: LID at 4 + 16
  EXPECT_EQ(b[21], 0x02);
  EXPECT_EQ(b[27], 0x02);  // CapabilityMask bit 1 (IsSM) at 4 + 20..23
  EXPECT_EQ(b[36] & 0x0F, port_state::kActive);  // PortState at 4 + 32
  EXPECT_EQ(PortInfoRecord::kSize, 68u);
  EXPECT_EQ(PortInfoRecord::kAttributeOffset * 8u, 72u);
  EXPECT_EQ(unpacked<PortInfoRecord>(b), r);
  EXPECT_EQ(pir_comp::kCapabilityMask, 1u << 7);
  EXPECT_EQ(kPirCapMaskMatchModifier, 0x80000000u);
}

TEST(InformInfoLayout, PinnedOffsetsAndRoundTrip) {
  InformInfo i;
  i.gid = gid("fe80::2:c903:0:7");
  i.lid_range_begin = inform_info::kAllLids;
  i.lid_range_end = 0x1234;
  i.is_generic = 1;
  i.subscribe = inform_info::kSubscribe;
  i.type = inform_info::kAllTypes;
  i.trap_number = 66;
  i.qpn = 0xABCDEF;
  i.resp_time_value = 0x13;
  i.producer_type = inform_info::kAllProducers;
  const auto b = packed(i);
  EXPECT_EQ(b[0], 0xFE);  // GID: bytes 0-15
  EXPECT_EQ(b[15], 0x07);
  EXPECT_EQ(b[16], 0xFF);  // LIDRangeBegin
  EXPECT_EQ(b[17], 0xFF);
  EXPECT_EQ(b[18], 0x12);  // LIDRangeEnd
  EXPECT_EQ(b[19], 0x34);
  EXPECT_EQ(b[20] | b[21], 0);  // reserved
  EXPECT_EQ(b[22], 1);     // IsGeneric
  EXPECT_EQ(b[23], 1);     // Subscribe
  EXPECT_EQ(b[24], 0xFF);  // Type
  EXPECT_EQ(b[25], 0xFF);
  EXPECT_EQ(b[26], 0x00);  // TrapNumber
  EXPECT_EQ(b[27], 66);
  EXPECT_EQ(b[28], 0xAB);  // QPN 31:8 | reserved 7:5 | RespTimeValue 4:0
  EXPECT_EQ(b[29], 0xCD);
  EXPECT_EQ(b[30], 0xEF);
  EXPECT_EQ(b[31], 0x13);
  EXPECT_EQ(b[32], 0x00);  // reserved
  EXPECT_EQ(b[33], 0xFF);  // ProducerType: 24 bits
  EXPECT_EQ(b[35], 0xFF);
  EXPECT_EQ(b[36], 0x00);
  EXPECT_EQ(unpacked<InformInfo>(b), i);
  EXPECT_EQ(InformInfo::kAttributeOffset, 5);

  InformInfo wide;
  wide.qpn = 0xFFFFFFFF;
  wide.resp_time_value = 0xFF;
  wide.producer_type = 0xFFFFFFFF;
  const auto w = packed(wide);
  EXPECT_EQ(w[31], 0x1F);  // reserved 7:5 stay clear
  EXPECT_EQ(w[32], 0x00);
  // Subscribe and IsGeneric are whole bytes: a bad value survives for the
  // SA to reject.
  std::array<uint8_t, 256> bad{};
  bad[23] = 7;
  EXPECT_EQ(unpacked<InformInfo>(bad).subscribe, 7);
}

TEST(SaClassPortInfo, OpenSmCapabilities) {
  EXPECT_EQ(opensm_sa_cpi::kCapabilityMask, (1u << 1) | (1u << 9) | (1u << 10) | (1u << 13));
  EXPECT_EQ(opensm_sa_cpi::kCapabilityMask2 & sa_cap2::kIsSendOnlyFullMemberSupported, 1u << 12);
  for (unsigned bit : {3u, 5u, 6u, 7u, 8u, 10u, 12u, 13u, 15u}) {
    EXPECT_NE(opensm_sa_cpi::kCapabilityMask2 & (1u << bit), 0u) << bit;
  }
  EXPECT_EQ(opensm_sa_cpi::kRespTimeValue, 16);
  EXPECT_EQ(opensm_sa_cpi::kClassVersion, 2);
}

}  // namespace
}  // namespace ibfab::mad
