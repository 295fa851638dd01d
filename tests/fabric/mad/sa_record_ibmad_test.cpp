// The SA record codecs against libibmad's field table. libibmad addresses an
// SA record's fields from the record's first byte (saquery passes
// IB_SA_DATA_OFFS + i * AttributeOffset * 8 of the MAD), so cross_check,
// which packs at byte 0, applies as is. Fields libibmad has no entry for
// are covered by the all-ones comparison here and pinned by hand in
// sa_record_layout_test.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "fabric/mad/sa/guid_info_record.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/multi_path_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/service_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "tests/fabric/mad/ibmad_field_check.h"

namespace ibfab::mad {
namespace {

using testing::cross_check;

static_assert(McMemberRecord::kAttributeId == IB_SA_ATTR_MCRECORD);
static_assert(PathRecord::kAttributeId == IB_SA_ATTR_PATHRECORD);
static_assert(NodeRecord::kAttributeId == IB_SA_ATTR_NODERECORD);
static_assert(PortInfoRecord::kAttributeId == IB_SA_ATTR_PORTINFORECORD);
static_assert(InformInfo::kAttributeId == IB_SA_ATTR_INFORMINFO);
static_assert(kSaClass == IB_SA_CLASS);
static_assert(kSaDataOffset == IB_SA_DATA_OFFS);
static_assert(kSaDataSize == IB_SA_DATA_SIZE);
static_assert(PathRecord::kSize == IB_SA_PR_RECSZ);
static_assert(NodeRecord::kSize == IB_SA_NR_RECSZ);
// libibmad's IB_SA_MCM_RECSZ is 53, one past the last byte of ProxyJoin's
// reserved bits; the record proper is 52 bytes and its offset 7 words.
static_assert(IB_SA_MCM_RECSZ <= McMemberRecord::kAttributeOffset * 8);

wire::Gid gid_counting(uint8_t first) {
  wire::Gid g;
  for (std::size_t i = 0; i < g.raw.size(); ++i) g.raw[i] = static_cast<uint8_t>(first + 3 * i);
  return g;
}

void expect_gid_field(uint8_t* buf, MAD_FIELDS f, const wire::Gid& want, const char* name) {
  wire::Gid got;
  mad_get_array(buf, 0, f, got.raw.data());
  EXPECT_EQ(got, want) << name;
}

// libibmad's FlowLabel entry is 24 bits wide (it covers the SL nibble) and
// reads back the low 20; SL is listed after it so that a flow label set
// through libibmad does not clear the SL. No entries: the three selectors,
// PacketLifeTime, HopLimit, Scope.
TEST(SaRecordIbmad, McMemberRecord) {
  using T = McMemberRecord;
  auto flow = IBFAB_FIELD(T, IB_SA_MCM_FLOW_LABEL_F, 20, flow_label);
  flow.ibmad_width = 24;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_SA_MCM_QKEY_F, 32, q_key),
          IBFAB_FIELD(T, IB_SA_MCM_MLID_F, 16, mlid),
          IBFAB_FIELD(T, IB_SA_MCM_MTU_F, 6, mtu),
          IBFAB_FIELD(T, IB_SA_MCM_TCLASS_F, 8, tclass),
          IBFAB_FIELD(T, IB_SA_MCM_PKEY_F, 16, p_key),
          IBFAB_FIELD(T, IB_SA_MCM_RATE_F, 6, rate),
          flow,
          IBFAB_FIELD(T, IB_SA_MCM_SL_F, 4, sl),
          IBFAB_FIELD(T, IB_SA_MCM_JOIN_STATE_F, 4, join_state),
          IBFAB_FIELD(T, IB_SA_MCM_PROXY_JOIN_F, 1, proxy_join),
      },
      [](McMemberRecord& m) {
        m.mgid.raw.fill(0xFF);
        m.port_gid.raw.fill(0xFF);
        m.mtu_selector = 3;
        m.rate_selector = 3;
        m.packet_life_time_selector = 3;
        m.packet_life_time = 0x3F;
        m.hop_limit = 0xFF;
        m.scope = 0xF;
      },
      [](uint8_t* buf) {
        std::memset(buf, 0xFF, 32);  // MGID, PortGID
        buf[38] |= 0xC0;             // MTUSelector
        buf[42] |= 0xC0;             // RateSelector
        buf[43] = 0xFF;              // PacketLifeTimeSelector | PacketLifeTime
        buf[47] = 0xFF;              // HopLimit
        buf[48] |= 0xF0;             // Scope
      });

  McMemberRecord m;
  m.mgid = gid_counting(0xF0);
  m.port_gid = gid_counting(0x11);
  std::array<uint8_t, 256> buf{};
  m.pack(std::span<uint8_t>(buf).first(T::kSize));
  expect_gid_field(buf.data(), IB_SA_MCM_MGID_F, m.mgid, "MGID");
  expect_gid_field(buf.data(), IB_SA_MCM_PORTGID_F, m.port_gid, "PortGID");

  std::array<uint8_t, 256> theirs{};
  mad_set_array(theirs.data(), 0, IB_SA_MCM_MGID_F, m.mgid.raw.data());
  mad_set_array(theirs.data(), 0, IB_SA_MCM_PORTGID_F, m.port_gid.raw.data());
  const McMemberRecord back = McMemberRecord::unpack(std::span<const uint8_t>(theirs).first(T::kSize));
  EXPECT_EQ(back.mgid, m.mgid);
  EXPECT_EQ(back.port_gid, m.port_gid);
}

// libibmad knows only DGID, SGID, DLID, SLID, NumbPath and SL.
TEST(SaRecordIbmad, PathRecord) {
  using T = PathRecord;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_SA_PR_DLID_F, 16, dlid),
          IBFAB_FIELD(T, IB_SA_PR_SLID_F, 16, slid),
          IBFAB_FIELD(T, IB_SA_PR_NPATH_F, 7, numb_path),
          IBFAB_FIELD(T, IB_SA_PR_SL_F, 4, sl),
      },
      [](PathRecord& p) {
        p.service_id = ~uint64_t{0};
        p.dgid.raw.fill(0xFF);
        p.sgid.raw.fill(0xFF);
        p.raw_traffic = true;
        p.flow_label = 0xFFFFF;
        p.hop_limit = 0xFF;
        p.tclass = 0xFF;
        p.reversible = true;
        p.p_key = 0xFFFF;
        p.qos_class = 0xFFF;
        p.mtu_selector = p.rate_selector = p.packet_life_time_selector = 3;
        p.mtu = p.rate = p.packet_life_time = 0x3F;
        p.preference = 0xFF;
      },
      [](uint8_t* buf) {
        std::memset(buf, 0xFF, 40);  // ServiceID, DGID, SGID
        buf[44] = 0x8F;              // RawTraffic | reserved 30:28 | FlowLabel 27:24
        buf[45] = buf[46] = 0xFF;    // FlowLabel 23:8
        buf[47] = 0xFF;              // HopLimit
        buf[48] = 0xFF;              // TClass
        buf[49] |= 0x80;             // Reversible
        buf[50] = buf[51] = 0xFF;    // P_Key
        buf[52] = 0xFF;              // QoSClass 15:8
        buf[53] |= 0xF0;             // QoSClass 7:4
        std::memset(buf + 54, 0xFF, 4);  // MTU, Rate, PacketLifeTime, Preference
      });

  PathRecord p;
  p.dgid = gid_counting(0xFE);
  p.sgid = gid_counting(0x20);
  std::array<uint8_t, 256> buf{};
  p.pack(std::span<uint8_t>(buf).first(T::kSize));
  expect_gid_field(buf.data(), IB_SA_PR_DGID_F, p.dgid, "DGID");
  expect_gid_field(buf.data(), IB_SA_PR_SGID_F, p.sgid, "SGID");

  std::array<uint8_t, 256> theirs{};
  mad_set_array(theirs.data(), 0, IB_SA_PR_DGID_F, p.dgid.raw.data());
  mad_set_array(theirs.data(), 0, IB_SA_PR_SGID_F, p.sgid.raw.data());
  const PathRecord back = PathRecord::unpack(std::span<const uint8_t>(theirs).first(T::kSize));
  EXPECT_EQ(back.dgid, p.dgid);
  EXPECT_EQ(back.sgid, p.sgid);
}

TEST(SaRecordIbmad, NodeRecord) {
  using T = NodeRecord;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_SA_NR_LID_F, 16, lid),
          IBFAB_FIELD(T, IB_SA_NR_BASEVER_F, 8, node_info.base_version),
          IBFAB_FIELD(T, IB_SA_NR_CLASSVER_F, 8, node_info.class_version),
          IBFAB_FIELD(T, IB_SA_NR_TYPE_F, 8, node_info.node_type),
          IBFAB_FIELD(T, IB_SA_NR_NPORTS_F, 8, node_info.num_ports),
          IBFAB_FIELD(T, IB_SA_NR_SYSTEM_GUID_F, 64, node_info.system_image_guid),
          IBFAB_FIELD(T, IB_SA_NR_GUID_F, 64, node_info.node_guid),
          IBFAB_FIELD(T, IB_SA_NR_PORT_GUID_F, 64, node_info.port_guid),
          IBFAB_FIELD(T, IB_SA_NR_PARTITION_CAP_F, 16, node_info.partition_cap),
          IBFAB_FIELD(T, IB_SA_NR_DEVID_F, 16, node_info.device_id),
          IBFAB_FIELD(T, IB_SA_NR_REVISION_F, 32, node_info.revision),
          IBFAB_FIELD(T, IB_SA_NR_LOCAL_PORT_F, 8, node_info.local_port_num),
          IBFAB_FIELD(T, IB_SA_NR_VENDORID_F, 24, node_info.vendor_id),
      },
      [](NodeRecord& n) { n.node_description.text.assign(NodeDescription::kSize, '\xFF'); },
      [](uint8_t* buf) {
        std::array<uint8_t, NodeDescription::kSize> ones;
        ones.fill(0xFF);
        mad_set_array(buf, 0, IB_SA_NR_NODEDESC_F, ones.data());
      });

  NodeRecord n;
  n.node_description.text = "ibfab h1 HCA-1";
  std::array<uint8_t, 256> buf{};
  n.pack(std::span<uint8_t>(buf).first(T::kSize));
  std::array<char, NodeDescription::kSize + 1> desc{};
  mad_get_array(buf.data(), 0, IB_SA_NR_NODEDESC_F, desc.data());
  EXPECT_STREQ(desc.data(), "ibfab h1 HCA-1");

  std::array<uint8_t, 256> theirs{};
  std::array<char, NodeDescription::kSize> text{};
  std::memcpy(text.data(), "sw-7", 4);
  mad_set_array(theirs.data(), 0, IB_SA_NR_NODEDESC_F, text.data());
  EXPECT_EQ(NodeRecord::unpack(std::span<const uint8_t>(theirs).first(T::kSize)).node_description.text,
            "sw-7");
}

// libibmad has no PortInfoRecord entries; saquery dumps the embedded
// PortInfo with the SMP field table at byte 4 of the record, as here.
TEST(SaRecordIbmad, PortInfoRecordEmbedsPortInfoAtByte4) {
  PortInfoRecord r;
  r.endport_lid = 0x0102;
  r.port_num = 7;
  r.options = 0x5A;
  r.port_info.m_key = 0x1122334455667788ull;
  r.port_info.gid_prefix = 0xFE80000000000000ull;
  r.port_info.lid = 0x0102;
  r.port_info.master_sm_lid = 0x0001;
  r.port_info.capability_mask = port_cap::kIsSM | port_cap::kIsClientReregistrationSupported;
  r.port_info.local_port_num = 7;
  r.port_info.port_state = port_state::kActive;
  r.port_info.neighbor_mtu = mtu::k4096;
  r.port_info.client_reregister = true;
  r.port_info.capability_mask2 = 0xBEEF;
  r.port_info.link_speed_ext_enabled = 0x1E;
  std::array<uint8_t, 256> buf{};
  r.pack(std::span<uint8_t>(buf).first(PortInfoRecord::kSize));

  constexpr int kPi = PortInfoRecord::kPortInfoOffset;
  uint8_t* p = buf.data();
  EXPECT_EQ(mad_get_field64(p, kPi, IB_PORT_MKEY_F), r.port_info.m_key);
  EXPECT_EQ(mad_get_field64(p, kPi, IB_PORT_GID_PREFIX_F), r.port_info.gid_prefix);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_LID_F), 0x0102u);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_SMLID_F), 0x0001u);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_CAPMASK_F), r.port_info.capability_mask);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_LOCAL_PORT_F), 7u);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_STATE_F), port_state::kActive);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_NEIGHBOR_MTU_F), mtu::k4096);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_CLIENT_REREG_F), 1u);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_CAPMASK2_F), 0xBEEFu);
  EXPECT_EQ(mad_get_field(p, kPi, IB_PORT_LINK_SPEED_EXT_ENABLED_F), 0x1Eu);

  // And back: a PortInfo written by libibmad at byte 4 unpacks in place.
  std::array<uint8_t, 256> theirs{};
  theirs[0] = 0x01;
  theirs[1] = 0x02;
  theirs[2] = 7;
  theirs[3] = 0x5A;
  mad_set_field64(theirs.data(), kPi, IB_PORT_MKEY_F, r.port_info.m_key);
  mad_set_field64(theirs.data(), kPi, IB_PORT_GID_PREFIX_F, r.port_info.gid_prefix);
  mad_set_field(theirs.data(), kPi, IB_PORT_LID_F, 0x0102);
  mad_set_field(theirs.data(), kPi, IB_PORT_SMLID_F, 0x0001);
  mad_set_field(theirs.data(), kPi, IB_PORT_CAPMASK_F, r.port_info.capability_mask);
  mad_set_field(theirs.data(), kPi, IB_PORT_LOCAL_PORT_F, 7);
  mad_set_field(theirs.data(), kPi, IB_PORT_STATE_F, port_state::kActive);
  mad_set_field(theirs.data(), kPi, IB_PORT_NEIGHBOR_MTU_F, mtu::k4096);
  mad_set_field(theirs.data(), kPi, IB_PORT_CLIENT_REREG_F, 1);
  mad_set_field(theirs.data(), kPi, IB_PORT_CAPMASK2_F, 0xBEEF);
  mad_set_field(theirs.data(), kPi, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 0x1E);
  EXPECT_EQ(PortInfoRecord::unpack(std::span<const uint8_t>(theirs).first(PortInfoRecord::kSize)), r);
  EXPECT_EQ(theirs, buf);
}

// The way saquery reads a GetTable response: record i at IB_SA_DATA_OFFS +
// i * AttributeOffset * 8 of the MAD, fields by libibmad.
TEST(SaRecordIbmad, McMemberRecordsInsideAGetTableResponse) {
  std::array<uint8_t, 256> mad{};
  init_sa_request(mad, 0x92, McMemberRecord::kAttributeId, 0x1234, 0);
  const auto mgid = wire::Gid::parse("ff12:401b:ffff::ffff:ffff").value();
  for (uint16_t i = 0; i < 3; ++i) {
    McMemberRecord m;
    m.mgid = mgid;
    m.mgid.raw[15] = static_cast<uint8_t>(i);
    m.mlid = static_cast<uint16_t>(0xC000 + i);
    m.q_key = 0x0B1B;
    m.join_state = join_state::kFull;
    m.proxy_join = i == 1;
    m.pack(mutable_sa_data(mad).subspan(i * McMemberRecord::kAttributeOffset * 8u,
                                        McMemberRecord::kSize));
  }
  const int step = static_cast<int>(mad_get_field(mad.data(), 0, IB_SA_ATTROFFS_F)) * 8;
  EXPECT_EQ(step, 56);
  for (int i = 0; i < 3; ++i) {
    const int base = IB_SA_DATA_OFFS + i * step;
    EXPECT_EQ(mad_get_field(mad.data(), base, IB_SA_MCM_MLID_F), 0xC000u + static_cast<unsigned>(i));
    EXPECT_EQ(mad_get_field(mad.data(), base, IB_SA_MCM_QKEY_F), 0x0B1Bu);
    EXPECT_EQ(mad_get_field(mad.data(), base, IB_SA_MCM_JOIN_STATE_F), 1u);
    EXPECT_EQ(mad_get_field(mad.data(), base, IB_SA_MCM_PROXY_JOIN_F), i == 1 ? 1u : 0u);
    wire::Gid got;
    mad_get_array(mad.data(), base, IB_SA_MCM_MGID_F, got.raw.data());
    EXPECT_EQ(got.str(), "ff12:401b:ffff::ffff:ff0" + std::to_string(i));
  }
}

}  // namespace
}  // namespace ibfab::mad

namespace ibfab::mad {
namespace {

// libibmad's ServiceRecord entries: ServiceID, ServiceGID, ServiceP_Key,
// ServiceLease, ServiceKey, ServiceName and ServiceData (one array of the
// last 64 bytes).
TEST(SaRecordIbmad, ServiceRecord) {
  using T = ServiceRecord;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_SA_SR_ID_F, 64, service_id),
          IBFAB_FIELD(T, IB_SA_SR_PKEY_F, 16, service_p_key),
          IBFAB_FIELD(T, IB_SA_SR_LEASE_F, 32, service_lease),
      },
      [](ServiceRecord& s) {
        s.service_gid.raw.fill(0xFF);
        s.service_key.fill(0xFF);
        s.service_name.fill(0xFF);
        s.data8.fill(0xFF);
        s.data16.fill(0xFFFF);
        s.data32.fill(0xFFFFFFFF);
        s.data64.fill(~uint64_t{0});
      },
      [](uint8_t* buf) {
        std::array<uint8_t, 64> ones;
        ones.fill(0xFF);
        mad_set_array(buf, 0, IB_SA_SR_GID_F, ones.data());
        mad_set_array(buf, 0, IB_SA_SR_KEY_F, ones.data());
        mad_set_array(buf, 0, IB_SA_SR_NAME_F, ones.data());
        mad_set_array(buf, 0, IB_SA_SR_DATA_F, ones.data());
      });
  ServiceRecord s;
  s.service_gid = gid_counting(0x40);
  for (std::size_t i = 0; i < s.service_key.size(); ++i) s.service_key[i] = static_cast<uint8_t>(0x90 + i);
  std::memcpy(s.service_name.data(), "ibfab.service", 13);
  s.data8[0] = 0x11;
  s.data16[0] = 0x2233;
  s.data32[0] = 0x44556677;
  s.data64[1] = 0x8899AABBCCDDEEFFull;
  std::array<uint8_t, 256> buf{};
  s.pack(std::span<uint8_t>(buf).first(T::kSize));
  expect_gid_field(buf.data(), IB_SA_SR_GID_F, s.service_gid, "ServiceGID");
  std::array<uint8_t, 16> key{};
  mad_get_array(buf.data(), 0, IB_SA_SR_KEY_F, key.data());
  EXPECT_EQ(key, s.service_key);
  std::array<uint8_t, 64> name{};
  mad_get_array(buf.data(), 0, IB_SA_SR_NAME_F, name.data());
  EXPECT_EQ(name, s.service_name);
  std::array<uint8_t, 64> data{};
  mad_get_array(buf.data(), 0, IB_SA_SR_DATA_F, data.data());
  EXPECT_EQ(data[0], 0x11);
  EXPECT_EQ(data[16], 0x22);
  EXPECT_EQ(data[17], 0x33);
  EXPECT_EQ(data[32], 0x44);
  EXPECT_EQ(data[63], 0xFF);
  EXPECT_EQ(data[56], 0x88);
}

TEST(SaRecordIbmad, GuidInfoRecord) {
  using T = GuidInfoRecord;
  static_assert(T::kSize == IB_SA_GIR_RECSZ);
  cross_check<T>({
      IBFAB_FIELD(T, IB_SA_GIR_LID_F, 16, lid),
      IBFAB_FIELD(T, IB_SA_GIR_BLOCKNUM_F, 8, block),
      IBFAB_FIELD(T, IB_SA_GIR_GUID0_F, 64, guid_info.guid[0]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID1_F, 64, guid_info.guid[1]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID2_F, 64, guid_info.guid[2]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID3_F, 64, guid_info.guid[3]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID4_F, 64, guid_info.guid[4]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID5_F, 64, guid_info.guid[5]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID6_F, 64, guid_info.guid[6]),
      IBFAB_FIELD(T, IB_SA_GIR_GUID7_F, 64, guid_info.guid[7]),
  });
}

}  // namespace
}  // namespace ibfab::mad

namespace ibfab::mad {
namespace {

// libibmad knows NumbPath, SGIDCount, DGIDCount and the first GID.
TEST(SaRecordIbmad, MultiPathRecord) {
  using T = MultiPathRecord;
  MultiPathRecord m;
  m.numb_path = 0x55;
  m.sgid_count = 0xA1;
  m.dgid_count = 0x1B;
  m.gids[0] = gid_counting(0x30);
  m.service_id = 0x0102030405060708ull;
  std::array<uint8_t, 256> buf{};
  m.pack(std::span<uint8_t>(buf).first(T::kSize));
  EXPECT_EQ(mad_get_field(buf.data(), 0, IB_SA_MP_NPATH_F), 0x55u);
  EXPECT_EQ(mad_get_field(buf.data(), 0, IB_SA_MP_NSRC_F), 0xA1u);
  EXPECT_EQ(mad_get_field(buf.data(), 0, IB_SA_MP_NDEST_F), 0x1Bu);
  expect_gid_field(buf.data(), IB_SA_MP_GID0_F, m.gids[0], "SDGID[0]");
  // ServiceID straddles: its top byte at 13, the rest at 17..23.
  EXPECT_EQ(buf[13], 0x01);
  EXPECT_EQ(buf[17], 0x02);
  EXPECT_EQ(buf[23], 0x08);
  EXPECT_EQ(T::unpack(std::span<const uint8_t>(buf).first(T::kSize)), m);
}

}  // namespace
}  // namespace ibfab::mad
