// Byte offsets pinned by hand from the IBTA 1.3 tables, helpers, and
// round trips.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "fabric/mad/forwarding_tables.h"
#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"
#include "fabric/mad/notice.h"
#include "fabric/mad/pkey_table.h"
#include "fabric/mad/port_counters.h"
#include "fabric/mad/port_counters_extended.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/saturating.h"
#include "fabric/mad/sm_info.h"
#include "fabric/mad/switch_info.h"

namespace ibfab::mad {
namespace {

template <class T>
std::array<uint8_t, 256> packed(const T& v) {
  std::array<uint8_t, 256> buf{};
  v.pack(std::span<uint8_t>(buf).first(T::kSize));
  return buf;
}

TEST(PortInfoLayout, PinnedOffsets) {
  PortInfo p;
  p.m_key = 0x0102030405060708ull;
  p.lid = 0x1234;
  p.master_sm_lid = 0x0042;
  p.capability_mask = port_cap::kIsSM | port_cap::kIsClientReregistrationSupported;
  p.link_speed_supported = 0x7;
  p.port_state = port_state::kActive;
  p.port_physical_state = phys_state::kLinkUp;
  p.lmc = 2;
  p.neighbor_mtu = mtu::k4096;
  p.client_reregister = true;
  const auto b = packed(p);
  EXPECT_EQ(b[0], 0x01);
  EXPECT_EQ(b[7], 0x08);
  EXPECT_EQ(b[16], 0x12);  // LID: bytes 16-17
  EXPECT_EQ(b[17], 0x34);
  EXPECT_EQ(b[18], 0x00);  // MasterSMLID: bytes 18-19
  EXPECT_EQ(b[19], 0x42);
  EXPECT_EQ(b[20], 0x02);  // CapabilityMask: bytes 20-23, bit 25 and bit 1
  EXPECT_EQ(b[23], 0x02);
  EXPECT_EQ(b[32], 0x74);  // LinkSpeedSupported 7:4 | PortState 3:0
  EXPECT_EQ(b[33], 0x50);  // PortPhysicalState 7:4
  EXPECT_EQ(b[34], 0x02);  // LMC 2:0
  EXPECT_EQ(b[36], 0x50);  // NeighborMTU 7:4
  EXPECT_EQ(b[51], 0x80);  // ClientReregister: byte 51 bit 7
  EXPECT_EQ(port_cap::kIsClientReregistrationSupported, 1u << 25);
}

TEST(PortInfoLayout, FieldsAreMaskedToTheirWidth) {
  PortInfo p;
  p.port_state = 0xF4;  // only the low nibble belongs to PortState
  p.lmc = 0xFF;
  p.link_speed_ext_enabled = 0xFF;
  const auto b = packed(p);
  EXPECT_EQ(b[32], 0x04);
  EXPECT_EQ(b[34], 0x07);  // reserved bits 5:3 stay zero
  EXPECT_EQ(b[63], 0x1F);
  const PortInfo q = PortInfo::unpack(std::span<const uint8_t>(b).first(PortInfo::kSize));
  EXPECT_EQ(q.port_state, 4);
  EXPECT_EQ(q.lmc, 7);
}

TEST(PortInfoLayout, ShortSpanReadsZeros) {
  PortInfo p;
  p.lid = 7;
  p.capability_mask2 = 0xFFFF;
  const auto b = packed(p);
  const PortInfo q = PortInfo::unpack(std::span<const uint8_t>(b).first(20));
  EXPECT_EQ(q.lid, 7);
  EXPECT_EQ(q.capability_mask2, 0);
}

TEST(NodeInfoLayout, PinnedOffsets) {
  NodeInfo n;
  n.node_type = NodeInfo::kTypeSwitch;
  n.num_ports = 36;
  n.system_image_guid = 0x1111111111111111ull;
  n.node_guid = 0x2222222222222222ull;
  n.port_guid = 0x3333333333333333ull;
  n.vendor_id = 0x0002C9;
  n.local_port_num = 5;
  const auto b = packed(n);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[2], 2);
  EXPECT_EQ(b[3], 36);
  EXPECT_EQ(b[4], 0x11);
  EXPECT_EQ(b[12], 0x22);
  EXPECT_EQ(b[20], 0x33);
  EXPECT_EQ(b[36], 5);
  EXPECT_EQ(b[37], 0x00);
  EXPECT_EQ(b[38], 0x02);
  EXPECT_EQ(b[39], 0xC9);
  EXPECT_EQ(NodeInfo::unpack(b), n);
}

TEST(SwitchInfoLayout, PinnedOffsets) {
  SwitchInfo s;
  s.multicast_fdb_cap = 0x0200;
  s.life_time_value = 0x13;
  s.port_state_change = true;
  s.enhanced_port0 = true;
  s.multicast_fdb_top = 0xC3FF;
  const auto b = packed(s);
  EXPECT_EQ(b[4], 0x02);  // MulticastFDBCap at 4
  EXPECT_EQ(b[11], 0x13 << 3 | 0x04);
  EXPECT_EQ(b[16], 0x08);
  EXPECT_EQ(b[18], 0xC3);
  EXPECT_EQ(b[19], 0xFF);
}

TEST(SmInfoLayout, PinnedOffsetsAndElection) {
  SmInfo s;
  s.guid = 0x0A0B0C0D0E0F1011ull;
  s.act_count = 0x55;
  s.priority = 14;
  s.sm_state = sm_state::kMaster;
  const auto b = packed(s);
  EXPECT_EQ(b[0], 0x0A);
  EXPECT_EQ(b[19], 0x55);
  EXPECT_EQ(b[20], 0xE3);
  EXPECT_EQ(SmInfo::unpack(b), s);

  SmInfo low_guid{.guid = 1, .priority = 5};
  SmInfo high_guid{.guid = 2, .priority = 5};
  SmInfo high_prio{.guid = 3, .priority = 6};
  EXPECT_TRUE(sm_outranks(low_guid, high_guid));
  EXPECT_FALSE(sm_outranks(high_guid, low_guid));
  EXPECT_TRUE(sm_outranks(high_prio, low_guid));
  EXPECT_EQ(sm_info_modifier::kHandover, 1u);
  EXPECT_EQ(sm_info_modifier::kDiscover, 5u);
}

TEST(NodeDescriptionLayout, PaddingAndTruncation) {
  const auto b = packed(NodeDescription{"sw-1"});
  EXPECT_EQ(b[0], 's');
  EXPECT_EQ(b[3], '1');
  for (std::size_t i = 4; i < 64; ++i) EXPECT_EQ(b[i], 0) << i;

  const std::string long_text(70, 'x');
  const auto c = packed(NodeDescription{long_text});
  EXPECT_EQ(c[63], 'x');
  EXPECT_EQ(c[64], 0);  // nothing past the attribute
  EXPECT_EQ(NodeDescription::unpack(c).text, std::string(64, 'x'));
}

TEST(ForwardingTables, MftAddressing) {
  EXPECT_EQ(mft_slot_of(0xC000), (MftSlot{0, 0}));
  EXPECT_EQ(mft_slot_of(0xC01F), (MftSlot{0, 31}));
  EXPECT_EQ(mft_slot_of(0xC020), (MftSlot{1, 0}));
  EXPECT_EQ(mft_slot_of(0xFFFF), (MftSlot{511, 31}));
  EXPECT_EQ(mft_slot_of(0xBFFF), std::nullopt);
  for (uint32_t mlid = 0xC000; mlid <= 0xFFFF; ++mlid) {
    const auto slot = mft_slot_of(static_cast<uint16_t>(mlid));
    ASSERT_TRUE(slot);
    ASSERT_EQ(mlid_of(*slot), mlid);
  }

  EXPECT_EQ(mft_attribute_modifier({.block = 5, .position = 2}), 0x20000005u);
  EXPECT_EQ(mft_attribute_modifier({.block = 511, .position = 15}), 0xF00001FFu);
  EXPECT_EQ(mft_decode_modifier(0x20000005u), (MftAddress{5, 2}));
  EXPECT_EQ(mft_decode_modifier(0xF00001FFu), (MftAddress{511, 15}));

  EXPECT_EQ(mft_position_of(17), 1);
  EXPECT_EQ(mft_bit_of(17), 1u << 1);
  EXPECT_EQ(mft_position_of(15), 0);
  EXPECT_EQ(mft_bit_of(15), 0x8000);
  EXPECT_EQ(mft_position_of(0), 0);
  EXPECT_EQ(mft_bit_of(0), 1);

  MulticastForwardingTable t;
  t.port_mask[1] = 0x8001;
  const auto b = packed(t);
  EXPECT_EQ(b[2], 0x80);
  EXPECT_EQ(b[3], 0x01);
}

TEST(ForwardingTables, LftAddressing) {
  EXPECT_EQ(lft_block_of(0), 0);
  EXPECT_EQ(lft_block_of(64), 1);
  EXPECT_EQ(lft_index_of(65), 1);
  EXPECT_EQ(lft_block_of(0xBFFF), 767);
  LinearForwardingTable t;
  t.port.fill(LinearForwardingTable::kNoPort);
  t.port[3] = 7;
  const auto b = packed(t);
  EXPECT_EQ(b[3], 7);
  EXPECT_EQ(b[4], 0xFF);
  EXPECT_EQ(LinearForwardingTable::unpack(b), t);
}

TEST(PKeyTableLayout, EntriesAndModifier) {
  PKeyTable t;
  t.p_key[0] = PKeyTable::kDefaultPKey;
  t.p_key[1] = 0x8001;
  t.p_key[31] = 0x7FFF;
  const auto b = packed(t);
  EXPECT_EQ(b[0], 0xFF);
  EXPECT_EQ(b[1], 0xFF);
  EXPECT_EQ(b[2], 0x80);
  EXPECT_EQ(b[3], 0x01);
  EXPECT_EQ(b[62], 0x7F);
  EXPECT_EQ(b[63], 0xFF);
  EXPECT_EQ(PKeyTable::unpack(b), t);

  EXPECT_EQ(pkey_table_modifier({.block = 1, .port = 3}), 0x00030001u);
  EXPECT_EQ(pkey_table_decode_modifier(0x00030001u), (PKeyTableAddress{1, 3}));
  EXPECT_EQ(pkey_table_modifier({.block = 2}), 2u);
}

TEST(NoticeLayout, Trap66AsOpenSmSendsIt) {
  Notice n;
  n.is_generic = true;
  n.type = notice_type::kSubnetManagement;
  n.producer_type = producer_type::kClassManager;
  n.trap_number = trap_number::kMcGroupCreated;
  n.issuer_lid = 0x0001;
  n.notice_toggle = true;
  n.notice_count = 0x1234;
  Gid mgid{};
  mgid[0] = 0xFF;
  mgid[1] = 0x12;
  mgid[15] = 0x01;
  n.set_details_gid(mgid);
  n.issuer_gid[0] = 0xFE;
  n.issuer_gid[1] = 0x80;
  const auto b = packed(n);
  EXPECT_EQ(b[0], 0x83);
  EXPECT_EQ(b[1], 0x00);
  EXPECT_EQ(b[3], 0x04);
  EXPECT_EQ(b[4], 0x00);
  EXPECT_EQ(b[5], 66);
  EXPECT_EQ(b[7], 0x01);
  EXPECT_EQ(b[8], 0x92);  // toggle | count 0x1234
  EXPECT_EQ(b[9], 0x34);
  for (std::size_t i = 10; i < 16; ++i) EXPECT_EQ(b[i], 0) << i;
  EXPECT_EQ(b[16], 0xFF);  // the MGID after 6 reserved bytes of DataDetails
  EXPECT_EQ(b[17], 0x12);
  EXPECT_EQ(b[31], 0x01);
  EXPECT_EQ(b[64], 0xFE);  // IssuerGID
  EXPECT_EQ(b[65], 0x80);
  const Notice back = Notice::unpack(b);
  EXPECT_EQ(back, n);
  EXPECT_EQ(back.details_gid(), mgid);
}

TEST(PortCountersLayout, PinnedOffsets) {
  PortCounters c;
  c.port_select = 9;
  c.qp1_dropped = 0xA1A2;
  c.vl15_dropped = 0xB1B2;
  c.local_link_integrity_errors = 0xC;
  c.excessive_buffer_overrun_errors = 0x3;
  c.port_xmit_data = 0x11223344;
  c.port_xmit_wait = 0x55667788;
  const auto b = packed(c);
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[1], 9);
  EXPECT_EQ(b[19], 0xC3);
  EXPECT_EQ(b[20], 0xA1);  // QP1Dropped: bytes 20-21
  EXPECT_EQ(b[21], 0xA2);
  EXPECT_EQ(b[22], 0xB1);  // VL15Dropped: bytes 22-23
  EXPECT_EQ(b[24], 0x11);
  EXPECT_EQ(b[40], 0x55);
  EXPECT_EQ(b[43], 0x88);
  EXPECT_EQ(b[44], 0);
  EXPECT_EQ(PortCounters::unpack(b), c);
}

TEST(PortCountersExtendedLayout, PinnedOffsets) {
  PortCountersExtended c;
  c.port_select = 2;
  c.port_xmit_data = 0x0102030405060708ull;
  c.port_multicast_rcv_pkts = 0xAAull;
  c.qp1_dropped = 0xBBull;
  const auto b = packed(c);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(b[8], 0x01);
  EXPECT_EQ(b[15], 0x08);
  EXPECT_EQ(b[71], 0xAA);
  EXPECT_EQ(b[183], 0xBB);
  EXPECT_EQ(PortCountersExtended::unpack(b), c);
}

TEST(Saturating, CountersStickAtTheirMaximum) {
  uint16_t c16 = 0xFFFE;
  add_saturating(c16, 5);
  EXPECT_EQ(c16, 0xFFFF);
  add_saturating(c16, 1);
  EXPECT_EQ(c16, 0xFFFF);

  uint8_t c4 = 14;
  add_saturating(c4, 5, 4);
  EXPECT_EQ(c4, 15);
  c4 = 3;
  add_saturating(c4, 2, 4);
  EXPECT_EQ(c4, 5);

  uint64_t c64 = ~uint64_t{0} - 1;
  add_saturating(c64, ~uint64_t{0});
  EXPECT_EQ(c64, ~uint64_t{0});

  uint32_t c32 = 10;
  add_saturating(c32, uint64_t{1} << 40);
  EXPECT_EQ(c32, 0xFFFFFFFFu);
}

TEST(Saturating, PortCountersUpdatesAndClear) {
  PortCounters c;
  c.count_xmit(5);  // 5 bytes = 2 words, rounded up
  c.count_xmit(8);
  EXPECT_EQ(c.port_xmit_data, 4u);
  EXPECT_EQ(c.port_xmit_pkts, 2u);
  c.count_rcv(uint64_t{1} << 40, 3);
  EXPECT_EQ(c.port_rcv_data, 0xFFFFFFFFu);
  EXPECT_EQ(c.port_rcv_pkts, 3u);
  c.add_local_link_integrity_errors(100);
  EXPECT_EQ(c.local_link_integrity_errors, 15);
  c.add_excessive_buffer_overrun_errors(2);
  EXPECT_EQ(c.excessive_buffer_overrun_errors, 2);
  c.port_xmit_wait = 9;
  c.qp1_dropped = 4;

  c.clear_selected(counter_select::kPortXmitData | counter_select::kLocalLinkIntegrityErrors,
                   counter_select2::kPortXmitWait);
  EXPECT_EQ(c.port_xmit_data, 0u);
  EXPECT_EQ(c.port_xmit_pkts, 2u);
  EXPECT_EQ(c.local_link_integrity_errors, 0);
  EXPECT_EQ(c.excessive_buffer_overrun_errors, 2);
  EXPECT_EQ(c.port_xmit_wait, 0u);
  EXPECT_EQ(c.qp1_dropped, 4);
  c.clear_selected(0xFFFF, 0xFF);
  EXPECT_EQ(c, PortCounters{});
}

}  // namespace
}  // namespace ibfab::mad
