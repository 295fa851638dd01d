#include "fabric/wire/mad_view.h"

#include <gtest/gtest.h>

#include <array>

#include "fabric/wire/smp.h"
#include "tests/fabric/wire/sample_packets.h"

namespace ibfab::wire {
namespace {

TEST(wire_SmpView, ReadsAndPatchesDirectedRouteFieldsInPlace) {
  auto mad = testing::dr_get_node_info(0x42);
  EXPECT_EQ(mad[1], 0x81);
  EXPECT_EQ(mad[7], 2);                      // HopCount
  EXPECT_EQ(load_be64(&mad[24]), 0x0102030405060708ULL);  // M_Key
  EXPECT_EQ(load_be16(&mad[32]), 0xffff);    // DrSLID
  EXPECT_EQ(load_be16(&mad[34]), 0xffff);    // DrDLID
  EXPECT_EQ(mad[128 + 1], 1);                // InitialPath[1]
  EXPECT_EQ(mad[128 + 2], 3);

  SmpView v(mad);
  EXPECT_TRUE(v.is_directed());
  EXPECT_EQ(v.hop_pointer(), 0);
  EXPECT_EQ(v.hop_count(), 2);
  EXPECT_FALSE(v.direction());
  EXPECT_EQ(v.attr_id(), smp_attr::kNodeInfo);
  EXPECT_EQ(v.tid(), 0x42u);
  // A switch forwarding outbound: hp++, record the ingress port.
  v.set_hop_pointer(static_cast<uint8_t>(v.hop_pointer() + 1));
  v.set_return_path(v.hop_pointer(), 5);
  EXPECT_EQ(mad[6], 1);
  EXPECT_EQ(mad[192 + 1], 5);
  EXPECT_EQ(v.return_path(1), 5);
  EXPECT_EQ(v.initial_path(2), 3);
  // The responder turns it around: D bit set, status kept apart from it.
  v.set_direction(true);
  v.set_status(mad_status::kMethodAttrUnsupported);
  EXPECT_EQ(load_be16(&mad[4]), 0x800c);
  EXPECT_TRUE(v.direction());
  EXPECT_EQ(v.status(), 0x000c);
  v.set_status(0);
  EXPECT_EQ(load_be16(&mad[4]), 0x8000);
  v.set_direction(false);
  EXPECT_EQ(load_be16(&mad[4]), 0x0000);
  v.data()[0] = 0xaa;
  v.data()[63] = 0xbb;
  EXPECT_EQ(mad[64], 0xaa);
  EXPECT_EQ(mad[127], 0xbb);
  v.set_initial_path(63, 9);
  EXPECT_EQ(mad[191], 9);
  v.set_return_path(63, 8);
  EXPECT_EQ(mad[255], 8);
  v.set_dr_slid(0x0102);
  v.set_dr_dlid(0x0304);
  EXPECT_EQ(mad[32], 0x01);
  EXPECT_EQ(mad[35], 0x04);
  v.set_m_key(0);
  EXPECT_EQ(v.m_key(), 0u);

  const ConstSmpView cv = v;
  EXPECT_EQ(cv.dr_dlid(), 0x0304);
  EXPECT_EQ(cv.data()[0], 0xaa);
}

TEST(wire_MadView, DecodesSmpHeaders) {
  const auto mad = testing::dr_get_node_info(7);
  const MadView v = parse_mad(mad);
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_TRUE(v.is_smp());
  EXPECT_FALSE(v.is_sa());
  EXPECT_EQ(v.header.method, mad_method::kGet);
  EXPECT_EQ(v.header.attr_id, smp_attr::kNodeInfo);
  EXPECT_EQ(v.header.class_specific, 0x0002);  // HopPointer 0, HopCount 2
  EXPECT_FALSE(v.rmpp.has_value());
  EXPECT_EQ(v.data.data(), mad.data() + 64);
  EXPECT_EQ(v.data.size(), 64u);
  EXPECT_EQ(v.smp().hop_count(), 2);
  EXPECT_EQ(v.smp().initial_path(2), 3);
}

TEST(wire_MadView, DecodesRmppAndSaHeaders) {
  const auto mad = testing::sa_get_table_mcmember(0x1234);
  const MadView v = parse_mad(mad);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.is_sa());
  EXPECT_EQ(v.header.class_version, 2);
  EXPECT_EQ(v.header.method, mad_method::kGetTable);
  EXPECT_EQ(v.header.attr_id, sa_attr::kMcMemberRecord);
  ASSERT_TRUE(v.rmpp && v.sa);
  EXPECT_EQ(v.rmpp->version, 1);
  EXPECT_FALSE(v.rmpp->active());
  EXPECT_EQ(v.sa->attr_offset, 7);
  EXPECT_EQ(v.sa->comp_mask, 0x3u);
  EXPECT_EQ(v.data.data(), mad.data() + 56);
  EXPECT_EQ(v.data.size(), 200u);
  EXPECT_EQ(v.data[0], 0xff);
  EXPECT_EQ(v.data[1], 0x12);
}

TEST(wire_MadView, OtherClassesAndErrors) {
  std::array<uint8_t, 300> buf{};
  buf[0] = 1;
  buf[1] = mgmt_class::kPerfMgt;
  MadView v = parse_mad(buf);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.raw.size(), kMadSize);
  EXPECT_EQ(v.data.size(), kMadSize - 24);
  EXPECT_FALSE(v.rmpp.has_value());
  buf[1] = 0x30;  // vendor range 2: RMPP header, no SA header
  v = parse_mad(buf);
  EXPECT_TRUE(v.rmpp.has_value());
  EXPECT_FALSE(v.sa.has_value());
  EXPECT_EQ(v.data.size(), kMadSize - 36);

  EXPECT_EQ(parse_mad(std::span<const uint8_t>(buf).first(255)).error, MadError::kTooShort);
  EXPECT_EQ(parse_mad({}).error, MadError::kTooShort);
  buf[0] = 2;
  EXPECT_EQ(parse_mad(buf).error, MadError::kBadBaseVersion);
  EXPECT_STRNE(parse_mad(buf).message(), "ok");
}

}  // namespace
}  // namespace ibfab::wire
