// Whole SA MADs: the request header against the one libibmad builds for
// saquery, the header accessors against libibmad's SA fields, and the
// records of a GetTable payload.
#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/wire/mad_view.h"

namespace ibfab::mad {
namespace {

using Mad = std::array<uint8_t, 256>;

// The MAD saquery builds for `saquery -g`: infiniband-diags' sa_query()
// zeroes a buffer, has libibmad encode {class SA, GetTable, MCMemberRecord,
// mask 0} (mad_encode is what mad_build_pkt writes into the MAD), then sets
// SM_Key.
Mad saquery_request(uint8_t method, uint16_t attr, uint64_t tid, uint64_t mask, uint64_t sm_key) {
  Mad m{};
  ib_rpc_t rpc{};
  rpc.mgtclass = IB_SA_CLASS;
  rpc.method = method;
  rpc.attr.id = attr;
  rpc.mask = mask;
  rpc.trid = tid;
  rpc.dataoffs = IB_SA_DATA_OFFS;
  mad_encode(m.data(), &rpc, nullptr, nullptr);
  mad_set_field64(m.data(), 0, IB_SA_MKEY_F, sm_key);
  return m;
}

TEST(SaMad, SaqueryGroupsRequestPinned) {
  Mad ours{};
  ours.fill(0xEE);  // init_sa_request must clear everything it does not set
  init_sa_request(ours, IB_MAD_METHOD_GET_TABLE, McMemberRecord::kAttributeId,
                  0x0123456789ABCDEFull, 0);
  const std::array<uint8_t, 56> header = {
      0x01, 0x03, 0x02, 0x12,  // BaseVersion 1, class SA, ClassVersion 2, GetTable
      0x00, 0x00, 0x00, 0x00,  // Status, ClassSpecific
      0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,  // TID
      0x00, 0x38, 0x00, 0x00,  // AttributeID MCMemberRecord, reserved
      0x00, 0x00, 0x00, 0x00,  // AttributeModifier
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // RMPP
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // SM_Key
      0x00, 0x07, 0x00, 0x00,  // AttributeOffset 7, reserved
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // ComponentMask
  };
  for (std::size_t i = 0; i < header.size(); ++i) EXPECT_EQ(ours[i], header[i]) << "byte " << i;
  for (std::size_t i = header.size(); i < ours.size(); ++i) EXPECT_EQ(ours[i], 0) << "byte " << i;

  // saquery's own bytes differ only in AttributeOffset, which libibmad
  // leaves 0 in requests.
  Mad theirs = saquery_request(IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_MCRECORD,
                               0x0123456789ABCDEFull, 0, 0);
  EXPECT_EQ(theirs[44], 0);
  EXPECT_EQ(theirs[45], 0);
  set_sa_attribute_offset(ours, 0);
  EXPECT_EQ(ours, theirs);
}

TEST(SaMad, MatchesLibibmadForOtherQueries) {
  // saquery -p with a mask and --smkey 1; an rdma_cm-style PathRecord Get.
  struct Case {
    uint8_t method;
    uint16_t attr;
    uint64_t mask;
    uint64_t sm_key;
  };
  for (const Case& c : {Case{IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_PATHRECORD,
                             pr_comp::kDgid | pr_comp::kSgid | pr_comp::kNumbPath, 1},
                        Case{IB_MAD_METHOD_GET, IB_SA_ATTR_NODERECORD, nr_comp::kLid, 0},
                        Case{IB_MAD_METHOD_SET, IB_SA_ATTR_MCRECORD,
                             mcm_comp::kCreateRequiredMask, 0x1122334455667788ull},
                        Case{IB_MAD_METHOD_DELETE, IB_SA_ATTR_MCRECORD,
                             mcm_comp::kJoinRequiredMask, 0}}) {
    Mad ours{};
    init_sa_request(ours, c.method, c.attr, 0xFEDCBA9876543210ull, c.mask, c.sm_key);
    EXPECT_EQ(sa_attribute_offset(ours), sa_attribute_offset_for(c.attr));
    set_sa_attribute_offset(ours, 0);
    EXPECT_EQ(ours, saquery_request(c.method, c.attr, 0xFEDCBA9876543210ull, c.mask, c.sm_key))
        << "attribute " << c.attr;
  }
}

TEST(SaMad, AccessorsAgreeWithLibibmad) {
  Mad m{};
  init_sa_request(m, IB_MAD_METHOD_SET, McMemberRecord::kAttributeId, 0x0102030405060708ull,
                  mcm_comp::kCreateRequiredMask, 1);
  set_sa_method(m, 0x81);
  set_sa_status(m, 0x0600);
  set_sa_attribute_modifier(m, 0x80000001u);
  uint8_t* p = m.data();
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_BASEVER_F), 1u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_MGMTCLASS_F), 0x03u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_CLASSVER_F), 2u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_METHOD_F), 0x01u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_RESPONSE_F), 1u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_STATUS_F), 0x0600u);
  EXPECT_EQ(mad_get_field64(p, 0, IB_MAD_TRID_F), 0x0102030405060708ull);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_ATTRID_F), 0x0038u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_ATTRMOD_F), 0x80000001u);
  EXPECT_EQ(mad_get_field64(p, 0, IB_SA_MKEY_F), 1u);
  EXPECT_EQ(mad_get_field(p, 0, IB_SA_ATTROFFS_F), 7u);
  EXPECT_EQ(mad_get_field64(p, 0, IB_SA_COMPMASK_F), 0x130C7u);

  EXPECT_EQ(sa_method(m), 0x81);
  EXPECT_EQ(sa_status(m), 0x0600);
  EXPECT_EQ(sa_tid(m), 0x0102030405060708ull);
  EXPECT_EQ(sa_attribute_id(m), McMemberRecord::kAttributeId);
  EXPECT_EQ(sa_attribute_modifier(m), 0x80000001u);
  EXPECT_EQ(sa_sm_key(m), 1u);
  EXPECT_EQ(sa_attribute_offset(m), McMemberRecord::kAttributeOffset);
  EXPECT_EQ(sa_component_mask(m), mcm_comp::kCreateRequiredMask);

  mad_set_field64(p, 0, IB_SA_MKEY_F, 0xAABBCCDDEEFF0011ull);
  mad_set_field64(p, 0, IB_SA_COMPMASK_F, 0x123456789ull);
  mad_set_field(p, 0, IB_SA_ATTROFFS_F, 14);
  mad_set_field64(p, 0, IB_MAD_TRID_F, 42);
  mad_set_field(p, 0, IB_MAD_ATTRID_F, 0x0011);
  EXPECT_EQ(sa_sm_key(m), 0xAABBCCDDEEFF0011ull);
  EXPECT_EQ(sa_component_mask(m), 0x123456789ull);
  EXPECT_EQ(sa_attribute_offset(m), 14);
  EXPECT_EQ(sa_tid(m), 42u);
  EXPECT_EQ(sa_attribute_id(m), 0x0011);

  set_sa_sm_key(m, 0);
  set_sa_component_mask(m, 0);
  set_sa_tid(m, 7);
  set_sa_attribute_id(m, 0x0035);
  EXPECT_EQ(mad_get_field64(p, 0, IB_SA_MKEY_F), 0u);
  EXPECT_EQ(mad_get_field64(p, 0, IB_SA_COMPMASK_F), 0u);
  EXPECT_EQ(mad_get_field64(p, 0, IB_MAD_TRID_F), 7u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_ATTRID_F), 0x0035u);
}

TEST(SaMad, DataAreaIsBytes56To255) {
  Mad m{};
  init_sa_request(m, IB_MAD_METHOD_SET, McMemberRecord::kAttributeId, 1,
                  mcm_comp::kJoinRequiredMask);
  EXPECT_EQ(mutable_sa_data(m).data(), m.data() + 56);
  EXPECT_EQ(sa_data(m).size(), 200u);
  McMemberRecord r;
  r.mlid = 0xC00F;
  r.join_state = join_state::kSendOnlyFull;
  r.pack(mutable_sa_data(m));
  EXPECT_EQ(m[56 + 36], 0xC0);  // perftest reads the MLID at data + 36
  EXPECT_EQ(m[56 + 37], 0x0F);
  EXPECT_EQ(mad_get_field(m.data(), IB_SA_DATA_OFFS, IB_SA_MCM_JOIN_STATE_F), 8u);
  EXPECT_EQ(McMemberRecord::unpack(sa_data(m)), r);

  // The fabric's own parser sees the same SA header.
  const wire::MadView v = wire::parse_mad(m);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v.is_sa());
  ASSERT_TRUE(v.sa.has_value());
  EXPECT_EQ(v.sa->attr_offset, McMemberRecord::kAttributeOffset);
  EXPECT_EQ(v.sa->comp_mask, mcm_comp::kJoinRequiredMask);
  EXPECT_EQ(v.data.data(), m.data() + 56);
}

TEST(SaMad, AttributeOffsets) {
  EXPECT_EQ(sa_attribute_offset_for(0x0001), 9);   // ClassPortInfo, 72 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0002), 10);  // Notice, 80 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0003), 5);   // InformInfo, 36 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0011), 14);  // NodeRecord, 108 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0012), 9);   // PortInfoRecord, 68 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0035), 8);   // PathRecord, 64 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0038), 7);   // MCMemberRecord, 52 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0013), 2);   // SLtoVLMappingTableRecord, 16 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0014), 3);   // SwitchInfoRecord, 24 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0015), 9);   // LinearForwardingTableRecord, 72 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0017), 9);   // MulticastForwardingTableRecord, 72 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0018), 4);   // SMInfoRecord, 25 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0020), 1);   // LinkRecord, 6 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0030), 9);   // GuidInfoRecord, 72 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0031), 22);  // ServiceRecord, 176 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0033), 9);   // P_KeyTableRecord, 72 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0036), 9);   // VLArbitrationTableRecord, 72 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x00F3), 8);   // InformInfoRecord, 60 bytes
  EXPECT_EQ(sa_attribute_offset_for(0x0016), 0);   // RandomForwardingTableRecord: no codec
}

TEST(SaMad, RecordsInAPayload) {
  std::vector<uint8_t> payload(200);
  EXPECT_EQ(sa_records_in(payload, 7), 3u);   // 3 x 56 = 168 of 200
  EXPECT_EQ(sa_records_in(payload, 8), 3u);   // 3 x 64 = 192
  EXPECT_EQ(sa_records_in(payload, 14), 1u);  // 112
  EXPECT_EQ(sa_records_in(payload, 0), 0u);   // empty GetTableResp
  EXPECT_EQ(sa_records_in({}, 7), 0u);
  // The data of three RMPP segments (600 bytes) holds 5 whole NodeRecords;
  // a payload of 448 bytes (PayloadLength minus the SA header) holds 4.
  payload.assign(3 * 200, 0);
  EXPECT_EQ(sa_records_in(payload, NodeRecord::kAttributeOffset), 5u);
  EXPECT_EQ(sa_records_in(std::span<const uint8_t>(payload).first(448),
                          NodeRecord::kAttributeOffset),
            4u);

  // A record straddling a segment boundary reads back whole.
  for (uint16_t i = 0; i < 4; ++i) {
    NodeRecord n;
    n.lid = static_cast<uint16_t>(i + 1);
    n.node_info.node_guid = 0x1000u + i;
    n.node_description.text = "node";
    n.pack(std::span<uint8_t>(payload).subspan(i * 112u, NodeRecord::kSize));
  }
  for (std::size_t i = 0; i < 4; ++i) {
    const auto rec = sa_record(payload, NodeRecord::kAttributeOffset, i);
    EXPECT_EQ(rec.size(), 112u);
    const NodeRecord n = NodeRecord::unpack(rec);
    EXPECT_EQ(n.lid, i + 1);
    EXPECT_EQ(n.node_info.node_guid, 0x1000u + i);
    EXPECT_EQ(n.node_description.text, "node");
  }
}

}  // namespace
}  // namespace ibfab::mad
