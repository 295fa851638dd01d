#include "sm/sa/port_info_records.h"

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace pir = mad::pir_comp;
constexpr uint8_t kSpeed10 = 0x4;  // LinkSpeed bit of 10 Gb/s (QDR)

bool bits_match(uint32_t want, uint32_t have, bool bitwise) {
  return bitwise ? (want & have) == want : want == have;
}

// The masked PortInfo fields of `q` equal those of `p` (`cap` is the
// node's CapabilityMask: a switch's port 0's).
bool fields_match(const mad::PortInfo& q, const mad::PortInfo& p, uint32_t cap, uint64_t m,
                  bool bitwise) {
#define IBFAB_PIR_FIELD(bit, field) \
  if ((m & pir::bit) && q.field != p.field) return false;
  IBFAB_PIR_FIELD(kLid, lid)
  IBFAB_PIR_FIELD(kMKey, m_key)
  IBFAB_PIR_FIELD(kGidPrefix, gid_prefix)
  IBFAB_PIR_FIELD(kMasterSmLid, master_sm_lid)
  IBFAB_PIR_FIELD(kDiagCode, diag_code)
  IBFAB_PIR_FIELD(kMKeyLeasePeriod, m_key_lease_period)
  IBFAB_PIR_FIELD(kLocalPortNum, local_port_num)
  IBFAB_PIR_FIELD(kLinkWidthSupported, link_width_supported)
  IBFAB_PIR_FIELD(kLinkWidthActive, link_width_active)
  IBFAB_PIR_FIELD(kLinkWidthEnabled, link_width_enabled)
  IBFAB_PIR_FIELD(kLinkSpeedSupported, link_speed_supported)
  IBFAB_PIR_FIELD(kPortState, port_state)
  IBFAB_PIR_FIELD(kPortPhysicalState, port_physical_state)
  IBFAB_PIR_FIELD(kLinkDownDefaultState, link_down_default_state)
  IBFAB_PIR_FIELD(kMKeyProtectBits, m_key_protect_bits)
  IBFAB_PIR_FIELD(kLmc, lmc)
  IBFAB_PIR_FIELD(kLinkSpeedActive, link_speed_active)
  IBFAB_PIR_FIELD(kLinkSpeedEnabled, link_speed_enabled)
  IBFAB_PIR_FIELD(kNeighborMtu, neighbor_mtu)
  IBFAB_PIR_FIELD(kMasterSmSl, master_sm_sl)
  IBFAB_PIR_FIELD(kVlCap, vl_cap)
  IBFAB_PIR_FIELD(kInitType, init_type)
  IBFAB_PIR_FIELD(kVlHighLimit, vl_high_limit)
  IBFAB_PIR_FIELD(kVlArbitrationHighCap, vl_arbitration_high_cap)
  IBFAB_PIR_FIELD(kVlArbitrationLowCap, vl_arbitration_low_cap)
  IBFAB_PIR_FIELD(kMtuCap, mtu_cap)
  IBFAB_PIR_FIELD(kVlStallCount, vl_stall_count)
  IBFAB_PIR_FIELD(kHoqLife, hoq_life)
  IBFAB_PIR_FIELD(kOperationalVls, operational_vls)
  IBFAB_PIR_FIELD(kPartitionEnforcementInbound, partition_enforcement_inbound)
  IBFAB_PIR_FIELD(kPartitionEnforcementOutbound, partition_enforcement_outbound)
  IBFAB_PIR_FIELD(kFilterRawInbound, filter_raw_inbound)
  IBFAB_PIR_FIELD(kFilterRawOutbound, filter_raw_outbound)
  IBFAB_PIR_FIELD(kMKeyViolations, m_key_violations)
  IBFAB_PIR_FIELD(kPKeyViolations, p_key_violations)
  IBFAB_PIR_FIELD(kQKeyViolations, q_key_violations)
  IBFAB_PIR_FIELD(kGuidCap, guid_cap)
  IBFAB_PIR_FIELD(kSubnetTimeout, subnet_timeout)
  IBFAB_PIR_FIELD(kRespTimeValue, resp_time_value)
  IBFAB_PIR_FIELD(kLocalPhyErrors, local_phy_errors)
  IBFAB_PIR_FIELD(kOverrunErrors, overrun_errors)
#undef IBFAB_PIR_FIELD
  if ((m & pir::kCapabilityMask) && !bits_match(q.capability_mask, p.capability_mask, bitwise))
    return false;
  if ((m & pir::kCapabilityMask2) && !bits_match(q.capability_mask2, p.capability_mask2, bitwise))
    return false;
  if (cap & mad::port_cap::kIsExtendedSpeedsSupported) {
    if ((m & pir::kLinkSpeedExtActive) && q.link_speed_ext_active != p.link_speed_ext_active) return false;
    if ((m & pir::kLinkSpeedExtSupported) && q.link_speed_ext_supported != p.link_speed_ext_supported)
      return false;
    if ((m & pir::kLinkSpeedExtEnabled) && q.link_speed_ext_enabled != p.link_speed_ext_enabled)
      return false;
  }
  return true;
}

void ports_of(const Subnet& s, const SubnetNode& n, const SubnetPort& rp,
              const mad::PortInfoRecord& req, uint64_t mask, bool bitwise, bool trusted,
              std::vector<mad::PortInfoRecord>& out) {
  const auto visit = [&](std::size_t pn) {
    const SubnetNodePort& np = n.ports[pn];
    if (!np.known) return;
    if (!n.is_switch() && (pn == 0 || pn >= n.port_guids.size() || n.port_guids[pn] == 0)) return;
    if (!pkey::shared(rp.pkeys, pkey::port_pkeys(s, n, static_cast<uint8_t>(pn)))) return;
    const mad::PortInfo& node_pi = n.is_switch() ? n.ports[0].info : np.info;
    if (!fields_match(req.port_info, np.info, node_pi.capability_mask, mask, bitwise)) return;
    const uint64_t guid = n.is_switch() ? n.info.node_guid : n.port_guids[pn];
    const SubnetPort* end = s.by_guid(guid);
    const uint16_t base = end ? end->lid : np.info.lid;
    const uint8_t lmc = end ? end->lmc : 0;
    if ((mask & pir::kEndportLid) && (req.endport_lid < base || req.endport_lid > base + (1u << lmc) - 1))
      return;
    mad::PortInfoRecord r;
    r.endport_lid = base;
    r.port_num = static_cast<uint8_t>(pn);
    r.port_info = np.info;
    if (mask & pir::kOptions) r.options = req.options;
    if ((!(mask & pir::kOptions) || !(req.options & 0x80)) &&
        (node_pi.capability_mask & mad::port_cap::kIsExtendedSpeedsSupported) &&
        np.info.link_speed_ext_active != 0) {
      r.port_info.link_speed_enabled |= kSpeed10;
      r.port_info.link_speed_supported |= kSpeed10;
      r.port_info.link_speed_active |= kSpeed10;
    }
    if (!trusted) r.port_info.m_key = 0;
    out.push_back(r);
  };
  if (mask & pir::kPortNum) {
    if (req.port_num < n.ports.size()) visit(req.port_num);
    return;
  }
  for (std::size_t pn = 0; pn < n.ports.size(); ++pn) visit(pn);
}

}  // namespace

void port_info_records(const Subnet& s, uint32_t requester, const mad::PortInfoRecord& req,
                       uint64_t mask, bool cap_mask_match, bool trusted,
                       std::vector<mad::PortInfoRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  const SubnetPort& rp = s.ports[requester];
  if (mask & (pir::kEndportLid | pir::kLid)) {
    // OpenSM looks the node up by the record's EndportLID for either bit.
    const SubnetPort* p = s.by_lid(req.endport_lid);
    const SubnetNode* n = p ? s.node(p->node_guid) : nullptr;
    if (n) ports_of(s, *n, rp, req, mask, cap_mask_match, trusted, out);
    return;
  }
  for (const uint32_t i : s.nodes_in_table_order())
    ports_of(s, s.nodes[i], rp, req, mask, cap_mask_match, trusted, out);
}

}  // namespace ibfab::sm
