// Every attribute codec against libibmad's independent field table.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/dr_smp.h"
#include "fabric/mad/forwarding_tables.h"
#include "fabric/mad/guid_info.h"
#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"
#include "fabric/mad/notice.h"
#include "fabric/mad/pma.h"
#include "fabric/mad/port_counters.h"
#include "fabric/mad/port_counters_extended.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/sm_info.h"
#include "fabric/mad/switch_info.h"
#include "tests/fabric/mad/ibmad_field_check.h"

namespace ibfab::mad {
namespace {

using testing::cross_check;

static_assert(kPmaDataOffset == IB_PC_DATA_OFFS);
static_assert(dr_smp::kDataOffset == IB_SMP_DATA_OFFS);
static_assert(dr_smp::kDataSize == IB_SMP_DATA_SIZE);
static_assert(NodeInfo::kAttributeId == IB_ATTR_NODE_INFO);
static_assert(NodeDescription::kAttributeId == IB_ATTR_NODE_DESC);
static_assert(SwitchInfo::kAttributeId == IB_ATTR_SWITCH_INFO);
static_assert(GuidInfo::kAttributeId == IB_ATTR_GUID_INFO);
static_assert(PortInfo::kAttributeId == IB_ATTR_PORT_INFO);
static_assert(LinearForwardingTable::kAttributeId == IB_ATTR_LINEARFORWTBL);
static_assert(MulticastForwardingTable::kAttributeId == IB_ATTR_MULTICASTFORWTBL);
static_assert(SmInfo::kAttributeId == IB_ATTR_SMINFO);
static_assert(PortCounters::kAttributeId == IB_GSI_PORT_COUNTERS);
static_assert(PortCountersExtended::kAttributeId == IB_GSI_PORT_COUNTERS_EXT);
static_assert(kPerfMgtClass == IB_PERFORMANCE_CLASS);
static_assert(NodeInfo::kTypeSwitch == IB_NODE_SWITCH);

TEST(AttributeIbmad, NodeInfo) {
  using T = NodeInfo;
  cross_check<T>({
      IBFAB_FIELD(T, IB_NODE_BASE_VERS_F, 8, base_version),
      IBFAB_FIELD(T, IB_NODE_CLASS_VERS_F, 8, class_version),
      IBFAB_FIELD(T, IB_NODE_TYPE_F, 8, node_type),
      IBFAB_FIELD(T, IB_NODE_NPORTS_F, 8, num_ports),
      IBFAB_FIELD(T, IB_NODE_SYSTEM_GUID_F, 64, system_image_guid),
      IBFAB_FIELD(T, IB_NODE_GUID_F, 64, node_guid),
      IBFAB_FIELD(T, IB_NODE_PORT_GUID_F, 64, port_guid),
      IBFAB_FIELD(T, IB_NODE_PARTITION_CAP_F, 16, partition_cap),
      IBFAB_FIELD(T, IB_NODE_DEVID_F, 16, device_id),
      IBFAB_FIELD(T, IB_NODE_REVISION_F, 32, revision),
      IBFAB_FIELD(T, IB_NODE_LOCAL_PORT_F, 8, local_port_num),
      IBFAB_FIELD(T, IB_NODE_VENDORID_F, 24, vendor_id),
  });
}

TEST(AttributeIbmad, PortInfo) {
  using T = PortInfo;
  cross_check<T>({
      IBFAB_FIELD(T, IB_PORT_MKEY_F, 64, m_key),
      IBFAB_FIELD(T, IB_PORT_GID_PREFIX_F, 64, gid_prefix),
      IBFAB_FIELD(T, IB_PORT_LID_F, 16, lid),
      IBFAB_FIELD(T, IB_PORT_SMLID_F, 16, master_sm_lid),
      IBFAB_FIELD(T, IB_PORT_CAPMASK_F, 32, capability_mask),
      IBFAB_FIELD(T, IB_PORT_DIAG_F, 16, diag_code),
      IBFAB_FIELD(T, IB_PORT_MKEY_LEASE_F, 16, m_key_lease_period),
      IBFAB_FIELD(T, IB_PORT_LOCAL_PORT_F, 8, local_port_num),
      IBFAB_FIELD(T, IB_PORT_LINK_WIDTH_ENABLED_F, 8, link_width_enabled),
      IBFAB_FIELD(T, IB_PORT_LINK_WIDTH_SUPPORTED_F, 8, link_width_supported),
      IBFAB_FIELD(T, IB_PORT_LINK_WIDTH_ACTIVE_F, 8, link_width_active),
      IBFAB_FIELD(T, IB_PORT_LINK_SPEED_SUPPORTED_F, 4, link_speed_supported),
      IBFAB_FIELD(T, IB_PORT_STATE_F, 4, port_state),
      IBFAB_FIELD(T, IB_PORT_PHYS_STATE_F, 4, port_physical_state),
      IBFAB_FIELD(T, IB_PORT_LINK_DOWN_DEF_F, 4, link_down_default_state),
      IBFAB_FIELD(T, IB_PORT_MKEY_PROT_BITS_F, 2, m_key_protect_bits),
      IBFAB_FIELD(T, IB_PORT_LMC_F, 3, lmc),
      IBFAB_FIELD(T, IB_PORT_LINK_SPEED_ACTIVE_F, 4, link_speed_active),
      IBFAB_FIELD(T, IB_PORT_LINK_SPEED_ENABLED_F, 4, link_speed_enabled),
      IBFAB_FIELD(T, IB_PORT_NEIGHBOR_MTU_F, 4, neighbor_mtu),
      IBFAB_FIELD(T, IB_PORT_SMSL_F, 4, master_sm_sl),
      IBFAB_FIELD(T, IB_PORT_VL_CAP_F, 4, vl_cap),
      IBFAB_FIELD(T, IB_PORT_INIT_TYPE_F, 4, init_type),
      IBFAB_FIELD(T, IB_PORT_VL_HIGH_LIMIT_F, 8, vl_high_limit),
      IBFAB_FIELD(T, IB_PORT_VL_ARBITRATION_HIGH_CAP_F, 8, vl_arbitration_high_cap),
      IBFAB_FIELD(T, IB_PORT_VL_ARBITRATION_LOW_CAP_F, 8, vl_arbitration_low_cap),
      IBFAB_FIELD(T, IB_PORT_INIT_TYPE_REPLY_F, 4, init_type_reply),
      IBFAB_FIELD(T, IB_PORT_MTU_CAP_F, 4, mtu_cap),
      IBFAB_FIELD(T, IB_PORT_VL_STALL_COUNT_F, 3, vl_stall_count),
      IBFAB_FIELD(T, IB_PORT_HOQ_LIFE_F, 5, hoq_life),
      IBFAB_FIELD(T, IB_PORT_OPER_VLS_F, 4, operational_vls),
      IBFAB_FIELD(T, IB_PORT_PART_EN_INB_F, 1, partition_enforcement_inbound),
      IBFAB_FIELD(T, IB_PORT_PART_EN_OUTB_F, 1, partition_enforcement_outbound),
      IBFAB_FIELD(T, IB_PORT_FILTER_RAW_INB_F, 1, filter_raw_inbound),
      IBFAB_FIELD(T, IB_PORT_FILTER_RAW_OUTB_F, 1, filter_raw_outbound),
      IBFAB_FIELD(T, IB_PORT_MKEY_VIOL_F, 16, m_key_violations),
      IBFAB_FIELD(T, IB_PORT_PKEY_VIOL_F, 16, p_key_violations),
      IBFAB_FIELD(T, IB_PORT_QKEY_VIOL_F, 16, q_key_violations),
      IBFAB_FIELD(T, IB_PORT_GUID_CAP_F, 8, guid_cap),
      IBFAB_FIELD(T, IB_PORT_CLIENT_REREG_F, 1, client_reregister),
      IBFAB_FIELD(T, IB_PORT_MCAST_PKEY_SUPR_ENAB_F, 2, multicast_pkey_trap_suppression_enabled),
      IBFAB_FIELD(T, IB_PORT_SUBN_TIMEOUT_F, 5, subnet_timeout),
      IBFAB_FIELD(T, IB_PORT_RESP_TIME_VAL_F, 5, resp_time_value),
      IBFAB_FIELD(T, IB_PORT_LOCAL_PHYS_ERR_F, 4, local_phy_errors),
      IBFAB_FIELD(T, IB_PORT_OVERRUN_ERR_F, 4, overrun_errors),
      IBFAB_FIELD(T, IB_PORT_MAX_CREDIT_HINT_F, 16, max_credit_hint),
      IBFAB_FIELD(T, IB_PORT_LINK_ROUND_TRIP_F, 24, link_round_trip_latency),
      IBFAB_FIELD(T, IB_PORT_CAPMASK2_F, 16, capability_mask2),
      IBFAB_FIELD(T, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 4, link_speed_ext_active),
      IBFAB_FIELD(T, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, 4, link_speed_ext_supported),
      IBFAB_FIELD(T, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 5, link_speed_ext_enabled),
  });
}

TEST(AttributeIbmad, SwitchInfo) {
  using T = SwitchInfo;
  cross_check<T>({
      IBFAB_FIELD(T, IB_SW_LINEAR_FDB_CAP_F, 16, linear_fdb_cap),
      IBFAB_FIELD(T, IB_SW_RANDOM_FDB_CAP_F, 16, random_fdb_cap),
      IBFAB_FIELD(T, IB_SW_MCAST_FDB_CAP_F, 16, multicast_fdb_cap),
      IBFAB_FIELD(T, IB_SW_LINEAR_FDB_TOP_F, 16, linear_fdb_top),
      IBFAB_FIELD(T, IB_SW_DEF_PORT_F, 8, default_port),
      IBFAB_FIELD(T, IB_SW_DEF_MCAST_PRIM_F, 8, default_multicast_primary_port),
      IBFAB_FIELD(T, IB_SW_DEF_MCAST_NOT_PRIM_F, 8, default_multicast_not_primary_port),
      IBFAB_FIELD(T, IB_SW_LIFE_TIME_F, 5, life_time_value),
      IBFAB_FIELD(T, IB_SW_STATE_CHANGE_F, 1, port_state_change),
      IBFAB_FIELD(T, IB_SW_OPT_SLTOVL_MAPPING_F, 2, optimized_sl_to_vl_mapping_programming),
      IBFAB_FIELD(T, IB_SW_LIDS_PER_PORT_F, 16, lids_per_port),
      IBFAB_FIELD(T, IB_SW_PARTITION_ENFORCE_CAP_F, 16, partition_enforcement_cap),
      IBFAB_FIELD(T, IB_SW_PARTITION_ENF_INB_F, 1, inbound_enforcement_cap),
      IBFAB_FIELD(T, IB_SW_PARTITION_ENF_OUTB_F, 1, outbound_enforcement_cap),
      IBFAB_FIELD(T, IB_SW_FILTER_RAW_INB_F, 1, filter_raw_inbound_cap),
      IBFAB_FIELD(T, IB_SW_FILTER_RAW_OUTB_F, 1, filter_raw_outbound_cap),
      IBFAB_FIELD(T, IB_SW_ENHANCED_PORT0_F, 1, enhanced_port0),
      IBFAB_FIELD(T, IB_SW_MCAST_FDB_TOP_F, 16, multicast_fdb_top),
  });
}

TEST(AttributeIbmad, SmInfo) {
  using T = SmInfo;
  cross_check<T>({
      IBFAB_FIELD(T, IB_SMINFO_GUID_F, 64, guid),
      IBFAB_FIELD(T, IB_SMINFO_KEY_F, 64, sm_key),
      IBFAB_FIELD(T, IB_SMINFO_ACT_F, 32, act_count),
      IBFAB_FIELD(T, IB_SMINFO_PRIO_F, 4, priority),
      IBFAB_FIELD(T, IB_SMINFO_STATE_F, 4, sm_state),
  });
}

TEST(AttributeIbmad, GuidInfo) {
  using T = GuidInfo;
  cross_check<T>({
      IBFAB_FIELD(T, IB_GI_GUID0_F, 64, guid[0]),
      IBFAB_FIELD(T, IB_GI_GUID1_F, 64, guid[1]),
      IBFAB_FIELD(T, IB_GI_GUID2_F, 64, guid[2]),
      IBFAB_FIELD(T, IB_GI_GUID3_F, 64, guid[3]),
      IBFAB_FIELD(T, IB_GI_GUID4_F, 64, guid[4]),
      IBFAB_FIELD(T, IB_GI_GUID5_F, 64, guid[5]),
      IBFAB_FIELD(T, IB_GI_GUID6_F, 64, guid[6]),
      IBFAB_FIELD(T, IB_GI_GUID7_F, 64, guid[7]),
  });
}

// libibmad's NoticeCount entry is 16 bits wide and so includes the toggle
// bit; the count proper is the low 15. NoticeToggle is listed after it so
// that setting the count through libibmad does not clear the toggle.
// IssuerGID has no libibmad entry; DataDetails is an array (below).
TEST(AttributeIbmad, Notice) {
  using T = Notice;
  auto count = IBFAB_FIELD(T, IB_NOTICE_COUNT_F, 15, notice_count);
  count.ibmad_width = 16;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_NOTICE_IS_GENERIC_F, 1, is_generic),
          IBFAB_FIELD(T, IB_NOTICE_TYPE_F, 7, type),
          IBFAB_FIELD(T, IB_NOTICE_PRODUCER_F, 24, producer_type),
          IBFAB_FIELD(T, IB_NOTICE_TRAP_NUMBER_F, 16, trap_number),
          IBFAB_FIELD(T, IB_NOTICE_ISSUER_LID_F, 16, issuer_lid),
          count,
          IBFAB_FIELD(T, IB_NOTICE_TOGGLE_F, 1, notice_toggle),
      },
      [](Notice& n) {
        n.data_details.fill(0xFF);
        n.issuer_gid.fill(0xFF);
      },
      [](uint8_t* buf) {
        std::array<uint8_t, Notice::kDataDetailsSize> ones;
        ones.fill(0xFF);
        mad_set_array(buf, 0, IB_NOTICE_DATA_DETAILS_F, ones.data());
        std::memset(buf + 64, 0xFF, 16);  // IssuerGID
      });

  Notice n;
  for (std::size_t i = 0; i < n.data_details.size(); ++i) n.data_details[i] = static_cast<uint8_t>(i + 1);
  std::array<uint8_t, 256> buf{};
  n.pack(std::span<uint8_t>(buf).first(Notice::kSize));
  std::array<uint8_t, 256> details{};
  mad_get_array(buf.data(), 0, IB_NOTICE_DATA_DETAILS_F, details.data());
  EXPECT_TRUE(std::equal(n.data_details.begin(), n.data_details.end(), details.begin()));
}

// QP1Dropped (bytes 20-21) is pinned by hand in attribute_layout_test: the
// libibmad entry for it overlaps VL15Dropped at bytes 22-23.
TEST(AttributeIbmad, PortCounters) {
  using T = PortCounters;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_PC_PORT_SELECT_F, 8, port_select),
          IBFAB_FIELD(T, IB_PC_COUNTER_SELECT_F, 16, counter_select),
          IBFAB_FIELD(T, IB_PC_ERR_SYM_F, 16, symbol_error_counter),
          IBFAB_FIELD(T, IB_PC_LINK_RECOVERS_F, 8, link_error_recovery_counter),
          IBFAB_FIELD(T, IB_PC_LINK_DOWNED_F, 8, link_downed_counter),
          IBFAB_FIELD(T, IB_PC_ERR_RCV_F, 16, port_rcv_errors),
          IBFAB_FIELD(T, IB_PC_ERR_PHYSRCV_F, 16, port_rcv_remote_physical_errors),
          IBFAB_FIELD(T, IB_PC_ERR_SWITCH_REL_F, 16, port_rcv_switch_relay_errors),
          IBFAB_FIELD(T, IB_PC_XMT_DISCARDS_F, 16, port_xmit_discards),
          IBFAB_FIELD(T, IB_PC_ERR_XMTCONSTR_F, 8, port_xmit_constraint_errors),
          IBFAB_FIELD(T, IB_PC_ERR_RCVCONSTR_F, 8, port_rcv_constraint_errors),
          IBFAB_FIELD(T, IB_PC_COUNTER_SELECT2_F, 8, counter_select2),
          IBFAB_FIELD(T, IB_PC_ERR_LOCALINTEG_F, 4, local_link_integrity_errors),
          IBFAB_FIELD(T, IB_PC_ERR_EXCESS_OVR_F, 4, excessive_buffer_overrun_errors),
          IBFAB_FIELD(T, IB_PC_VL15_DROPPED_F, 16, vl15_dropped),
          IBFAB_FIELD(T, IB_PC_XMT_BYTES_F, 32, port_xmit_data),
          IBFAB_FIELD(T, IB_PC_RCV_BYTES_F, 32, port_rcv_data),
          IBFAB_FIELD(T, IB_PC_XMT_PKTS_F, 32, port_xmit_pkts),
          IBFAB_FIELD(T, IB_PC_RCV_PKTS_F, 32, port_rcv_pkts),
          IBFAB_FIELD(T, IB_PC_XMT_WAIT_F, 32, port_xmit_wait),
      },
      [](PortCounters& c) { c.qp1_dropped = 0xFFFF; },
      [](uint8_t* buf) { buf[20] = buf[21] = 0xFF; });
}

// The same attribute read the way perfquery does: libibmad addresses the
// PMA data area at IB_PC_DATA_OFFS of the whole MAD.
TEST(AttributeIbmad, PortCountersInsideAPmaMad) {
  PortCounters c;
  c.port_select = 3;
  c.symbol_error_counter = 0xBEEF;
  c.port_xmit_wait = 0x01020304;
  std::array<uint8_t, 256> mad{};
  c.pack(std::span<uint8_t>(mad).subspan(kPmaDataOffset, PortCounters::kSize));
  EXPECT_EQ(mad_get_field(mad.data(), IB_PC_DATA_OFFS, IB_PC_PORT_SELECT_F), 3u);
  EXPECT_EQ(mad_get_field(mad.data(), IB_PC_DATA_OFFS, IB_PC_ERR_SYM_F), 0xBEEFu);
  EXPECT_EQ(mad_get_field(mad.data(), IB_PC_DATA_OFFS, IB_PC_XMT_WAIT_F), 0x01020304u);
  EXPECT_EQ(mad[kPmaDataOffset + 1], 3);  // PortSelect is byte 65 of the MAD
}

TEST(AttributeIbmad, PortCountersExtended) {
  using T = PortCountersExtended;
  cross_check<T>({
      IBFAB_FIELD(T, IB_PC_EXT_PORT_SELECT_F, 8, port_select),
      IBFAB_FIELD(T, IB_PC_EXT_COUNTER_SELECT_F, 16, counter_select),
      IBFAB_FIELD(T, IB_PC_EXT_COUNTER_SELECT2_F, 32, counter_select2),
      IBFAB_FIELD(T, IB_PC_EXT_XMT_BYTES_F, 64, port_xmit_data),
      IBFAB_FIELD(T, IB_PC_EXT_RCV_BYTES_F, 64, port_rcv_data),
      IBFAB_FIELD(T, IB_PC_EXT_XMT_PKTS_F, 64, port_xmit_pkts),
      IBFAB_FIELD(T, IB_PC_EXT_RCV_PKTS_F, 64, port_rcv_pkts),
      IBFAB_FIELD(T, IB_PC_EXT_XMT_UPKTS_F, 64, port_unicast_xmit_pkts),
      IBFAB_FIELD(T, IB_PC_EXT_RCV_UPKTS_F, 64, port_unicast_rcv_pkts),
      IBFAB_FIELD(T, IB_PC_EXT_XMT_MPKTS_F, 64, port_multicast_xmit_pkts),
      IBFAB_FIELD(T, IB_PC_EXT_RCV_MPKTS_F, 64, port_multicast_rcv_pkts),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_SYM_F, 64, symbol_error_counter),
      IBFAB_FIELD(T, IB_PC_EXT_LINK_RECOVERS_F, 64, link_error_recovery_counter),
      IBFAB_FIELD(T, IB_PC_EXT_LINK_DOWNED_F, 64, link_downed_counter),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_RCV_F, 64, port_rcv_errors),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_PHYSRCV_F, 64, port_rcv_remote_physical_errors),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_SWITCH_REL_F, 64, port_rcv_switch_relay_errors),
      IBFAB_FIELD(T, IB_PC_EXT_XMT_DISCARDS_F, 64, port_xmit_discards),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_XMTCONSTR_F, 64, port_xmit_constraint_errors),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_RCVCONSTR_F, 64, port_rcv_constraint_errors),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_LOCALINTEG_F, 64, local_link_integrity_errors),
      IBFAB_FIELD(T, IB_PC_EXT_ERR_EXCESS_OVR_F, 64, excessive_buffer_overrun_errors),
      IBFAB_FIELD(T, IB_PC_EXT_VL15_DROPPED_F, 64, vl15_dropped),
      IBFAB_FIELD(T, IB_PC_EXT_XMT_WAIT_F, 64, port_xmit_wait),
      IBFAB_FIELD(T, IB_PC_EXT_QP1_DROP_F, 64, qp1_dropped),
  });
}

// libibmad's RedirectFL and TrapFL entries are 24 bits wide and so include
// the SL nibble; the flow label proper is the low 20 bits. The SL fields are
// listed after them so that setting a flow label through libibmad does not
// clear the SL.
TEST(AttributeIbmad, ClassPortInfo) {
  using T = ClassPortInfo;
  auto redirect_fl = IBFAB_FIELD(T, IB_CPI_REDIRECT_FL_F, 20, redirect_fl);
  redirect_fl.ibmad_width = 24;
  auto trap_fl = IBFAB_FIELD(T, IB_CPI_TRAP_FL_F, 20, trap_fl);
  trap_fl.ibmad_width = 24;
  cross_check<T>(
      {
          IBFAB_FIELD(T, IB_CPI_BASEVER_F, 8, base_version),
          IBFAB_FIELD(T, IB_CPI_CLASSVER_F, 8, class_version),
          IBFAB_FIELD(T, IB_CPI_CAPMASK_F, 16, capability_mask),
          IBFAB_FIELD(T, IB_CPI_CAPMASK2_F, 27, capability_mask2),
          IBFAB_FIELD(T, IB_CPI_RESP_TIME_VALUE_F, 5, resp_time_value),
          IBFAB_FIELD(T, IB_CPI_REDIRECT_TC_F, 8, redirect_tc),
          redirect_fl,
          IBFAB_FIELD(T, IB_CPI_REDIRECT_SL_F, 4, redirect_sl),
          IBFAB_FIELD(T, IB_CPI_REDIRECT_LID_F, 16, redirect_lid),
          IBFAB_FIELD(T, IB_CPI_REDIRECT_PKEY_F, 16, redirect_p_key),
          IBFAB_FIELD(T, IB_CPI_REDIRECT_QP_F, 24, redirect_qp),
          IBFAB_FIELD(T, IB_CPI_REDIRECT_QKEY_F, 32, redirect_q_key),
          IBFAB_FIELD(T, IB_CPI_TRAP_TC_F, 8, trap_tc),
          trap_fl,
          IBFAB_FIELD(T, IB_CPI_TRAP_SL_F, 4, trap_sl),
          IBFAB_FIELD(T, IB_CPI_TRAP_LID_F, 16, trap_lid),
          IBFAB_FIELD(T, IB_CPI_TRAP_PKEY_F, 16, trap_p_key),
          IBFAB_FIELD(T, IB_CPI_TRAP_HL_F, 8, trap_hl),
          IBFAB_FIELD(T, IB_CPI_TRAP_QP_F, 24, trap_qp),
          IBFAB_FIELD(T, IB_CPI_TRAP_QKEY_F, 32, trap_q_key),
      },
      [](ClassPortInfo& c) {
        c.redirect_gid.fill(0xFF);
        c.trap_gid.fill(0xFF);
      },
      [](uint8_t* buf) {
        Gid ones;
        ones.fill(0xFF);
        mad_set_array(buf, 0, IB_CPI_REDIRECT_GID_F, ones.data());
        mad_set_array(buf, 0, IB_CPI_TRAP_GID_F, ones.data());
      });

  ClassPortInfo c;
  for (std::size_t i = 0; i < 16; ++i) {
    c.redirect_gid[i] = static_cast<uint8_t>(0x10 + i);
    c.trap_gid[i] = static_cast<uint8_t>(0xA0 + i);
  }
  std::array<uint8_t, 256> buf{};
  c.pack(std::span<uint8_t>(buf).first(ClassPortInfo::kSize));
  Gid got{};
  mad_get_array(buf.data(), 0, IB_CPI_REDIRECT_GID_F, got.data());
  EXPECT_EQ(got, c.redirect_gid);
  mad_get_array(buf.data(), 0, IB_CPI_TRAP_GID_F, got.data());
  EXPECT_EQ(got, c.trap_gid);
}

// Whole-block attributes: libibmad sees them as one 64-byte array.
template <class Table>
void check_array_attribute(MAD_FIELDS field, const Table& table) {
  std::array<uint8_t, 256> ours{};
  table.pack(std::span<uint8_t>(ours).first(Table::kSize));
  std::array<uint8_t, 256> ibmad{};
  mad_get_array(ours.data(), 0, field, ibmad.data());
  EXPECT_TRUE(std::equal(ours.begin(), ours.begin() + Table::kSize, ibmad.begin()));

  std::array<uint8_t, 256> theirs{};
  mad_set_array(theirs.data(), 0, field, ours.data());
  EXPECT_EQ(Table::unpack(std::span<const uint8_t>(theirs).first(Table::kSize)), table);
}

TEST(AttributeIbmad, NodeDescription) {
  check_array_attribute(IB_NODE_DESC_F, NodeDescription{"ibfab sw-1 HCA-1 \xe2\x9c\x93"});
}

TEST(AttributeIbmad, LinearForwardingTable) {
  LinearForwardingTable t;
  for (std::size_t i = 0; i < t.port.size(); ++i) t.port[i] = static_cast<uint8_t>(i * 7 + 1);
  check_array_attribute(IB_LINEAR_FORW_TBL_F, t);
}

TEST(AttributeIbmad, MulticastForwardingTable) {
  MulticastForwardingTable t;
  for (std::size_t i = 0; i < t.port_mask.size(); ++i) {
    t.port_mask[i] = static_cast<uint16_t>(0x8001 | (i << 4) | (i << 9));
  }
  check_array_attribute(IB_MULTICAST_FORW_TBL_F, t);
}

// libibmad's view of the DR SMP header this module writes.
TEST(AttributeIbmad, DirectedRouteHeader) {
  std::array<uint8_t, 256> smp{};
  const std::array<uint8_t, 3> hops = {1, 5, 7};
  dr_smp::DrRequest r;
  r.method = dr_smp::kMethodSet;
  r.transaction_id = 0x0123456789ABCDEFull;
  r.attribute_id = PortInfo::kAttributeId;
  r.attribute_modifier = 3;
  r.m_key = 0x1122334455667788ull;
  r.dr_slid = 0x0010;
  r.dr_dlid = 0x0020;
  dr_smp::init_request(smp, r, hops);
  dr_smp::set_hop_pointer(smp, 2);
  dr_smp::set_direction(smp, true);
  dr_smp::set_status(smp, 0x001C);
  dr_smp::set_return_path(smp, 1, 9);

  uint8_t* p = smp.data();
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_BASEVER_F), 1u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_MGMTCLASS_F), 0x81u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_CLASSVER_F), 1u);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_METHOD_F), dr_smp::kMethodSet);
  EXPECT_EQ(mad_get_field64(p, 0, IB_MAD_TRID_F), r.transaction_id);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_ATTRID_F), PortInfo::kAttributeId);
  EXPECT_EQ(mad_get_field(p, 0, IB_MAD_ATTRMOD_F), 3u);
  EXPECT_EQ(mad_get_field64(p, 0, IB_MAD_MKEY_F), r.m_key);
  EXPECT_EQ(mad_get_field(p, 0, IB_DRSMP_HOPCNT_F), 3u);
  EXPECT_EQ(mad_get_field(p, 0, IB_DRSMP_HOPPTR_F), 2u);
  EXPECT_EQ(mad_get_field(p, 0, IB_DRSMP_DIRECTION_F), 1u);
  EXPECT_EQ(mad_get_field(p, 0, IB_DRSMP_STATUS_F) & 0x7FFF, 0x001Cu);
  EXPECT_EQ(mad_get_field(p, 0, IB_DRSMP_DRSLID_F), 0x0010u);
  EXPECT_EQ(mad_get_field(p, 0, IB_DRSMP_DRDLID_F), 0x0020u);
  std::array<uint8_t, 256> path{};
  mad_get_array(p, 0, IB_DRSMP_PATH_F, path.data());
  EXPECT_EQ(path[1], 1);
  EXPECT_EQ(path[2], 5);
  EXPECT_EQ(path[3], 7);
  mad_get_array(p, 0, IB_DRSMP_RPATH_F, path.data());
  EXPECT_EQ(path[1], 9);
  EXPECT_EQ(dr_smp::status(smp), 0x001C);
  EXPECT_TRUE(dr_smp::direction(smp));
}

}  // namespace
}  // namespace ibfab::mad
