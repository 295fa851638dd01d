#include "fabric/model/sma.h"

#include <algorithm>
#include <cstring>
#include <span>

#include "fabric/mad/forwarding_tables.h"
#include "fabric/mad/guid_info.h"
#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"
#include "fabric/mad/pkey_table.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/sl_to_vl_table.h"
#include "fabric/mad/switch_info.h"
#include "fabric/mad/vl_arbitration_table.h"
#include "fabric/model/hca.h"
#include "fabric/model/link.h"
#include "fabric/model/switch_node.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::fabric {
namespace {

namespace st = wire::mad_status;
constexpr std::size_t kData = 64;

std::span<uint8_t> data_span(uint8_t* d) { return {d, 64}; }

}  // namespace

void Sma::answer(Port& in, mad::SmpBuffer smp) {
  uint8_t* data = smp.data() + kData;
  const uint8_t method = smp[3];
  const uint16_t attr = wire::load_be16(&smp[16]);
  const uint32_t mod = wire::load_be32(&smp[20]);
  uint16_t status = st::kOk;
  const bool set = method == wire::mad_method::kSet;
  if (smp[0] != 1 || smp[2] != 1) {
    status = st::kBadVersion;
  } else if (method != wire::mad_method::kGet && !set) {
    status = st::kMethodUnsupported;
  } else {
    switch (attr) {
      case mad::NodeInfo::kAttributeId:
        status = set ? st::kMethodAttrUnsupported : node_info(in, data);
        break;
      case mad::NodeDescription::kAttributeId:
        if (set) {
          status = st::kMethodAttrUnsupported;
        } else {
          mad::NodeDescription{node_.description()}.pack(data_span(data));
        }
        break;
      case mad::PortInfo::kAttributeId: status = port_info(in, mod, set, data); break;
      case mad::SwitchInfo::kAttributeId: status = switch_info(set, data); break;
      case mad::LinearForwardingTable::kAttributeId: status = lft(mod, set, data); break;
      case mad::MulticastForwardingTable::kAttributeId: status = mft(mod, set, data); break;
      case mad::PKeyTable::kAttributeId: status = pkey_table(in, mod, set, data); break;
      case mad::GuidInfo::kAttributeId: status = guid_info(in, mod, set, data); break;
      case mad::SlToVlTable::kAttributeId: status = sl_to_vl(in, mod, set, data); break;
      case mad::VlArbitrationTable::kAttributeId: status = vl_arbitration(in, mod, set, data); break;
      default: status = st::kMethodAttrUnsupported; break;
    }
  }
  const uint16_t d_bit = smp[1] == wire::mgmt_class::kSubnDirected ? (wire::load_be16(&smp[4]) & 0x8000) : 0;
  wire::store_be16(&smp[4], static_cast<uint16_t>(d_bit | status));
}

uint16_t Sma::node_info(Port& in, uint8_t* data) {
  mad::NodeInfo ni;
  ni.node_type = node_.is_switch() ? mad::NodeInfo::kTypeSwitch : mad::NodeInfo::kTypeCa;
  ni.num_ports = node_.num_ports();
  ni.system_image_guid = node_.system_guid();
  ni.node_guid = node_.guid();
  ni.port_guid = node_.is_switch() ? node_.guid() : in.guid();
  ni.partition_cap = static_cast<uint16_t>(node_.management_port(in).pkeys.size());
  ni.device_id = node_.device_id();
  ni.revision = 0;
  ni.local_port_num = in.number();
  ni.vendor_id = node_.vendor_id();
  ni.pack(data_span(data));
  return st::kOk;
}

Port* Sma::port_for(Port& in, uint32_t mod) {
  if (node_.is_switch()) return mod <= node_.num_ports() ? &node_.port(static_cast<uint8_t>(mod)) : nullptr;
  if (mod == 0) return &in;  // a CA answers for the port the SMP came in on
  return mod <= node_.num_ports() ? &node_.port(static_cast<uint8_t>(mod)) : nullptr;
}

uint16_t Sma::port_info(Port& in, uint32_t mod, bool set, uint8_t* data) {
  Port* p = port_for(in, mod);
  if (!p) return st::kInvalidAttrValue;
  Port& base = node_.is_switch() ? node_.port(0) : *p;  // holds LID and SM fields
  const bool external = !(node_.is_switch() && p->number() == 0);
  if (set) {
    const mad::PortInfo req = mad::PortInfo::unpack(std::span<const uint8_t>(data, 64));
    // Validate everything first: a bad Set changes nothing.
    const PortState cur = p->state();
    const uint8_t want = req.port_state;
    bool state_ok = true;
    switch (want) {
      case mad::port_state::kNoChange: break;
      case mad::port_state::kDown: break;
      case mad::port_state::kArmed: state_ok = cur == PortState::Init; break;
      case mad::port_state::kActive: state_ok = cur == PortState::Armed; break;
      default: state_ok = false; break;  // Init is not settable
    }
    const bool base_fields = !external || !node_.is_switch();
    if (!state_ok || (base_fields && (req.lid >= 0xC000 || req.lmc > 7)) ||
        (req.neighbor_mtu != 0 && req.neighbor_mtu > p->mtu_cap) ||
        (req.operational_vls != 0 && req.operational_vls > p->vl_cap)) {
      return st::kInvalidAttrValue;
    }
    if (base_fields) {
      const bool lid_changed = base.lid != req.lid;
      const bool sm_changed = base.master_sm_lid != req.master_sm_lid;
      base.m_key = req.m_key;
      base.gid_prefix = req.gid_prefix;
      base.lid = req.lid;
      base.master_sm_lid = req.master_sm_lid;
      base.master_sm_sl = req.master_sm_sl;
      base.lmc = req.lmc;
      base.m_key_lease_period = req.m_key_lease_period;
      base.m_key_protect_bits = req.m_key_protect_bits;
      base.subnet_timeout = req.subnet_timeout;
      if (lid_changed && base.lid != 0) node_.port_event(base, PortEvent::LidChange);
      if (sm_changed) node_.port_event(base, PortEvent::SmChange);
      if (req.client_reregister && !node_.is_switch()) node_.port_event(base, PortEvent::ClientReregister);
    }
    if (req.neighbor_mtu != 0) p->neighbor_mtu = req.neighbor_mtu;
    if (req.operational_vls != 0) p->operational_vls = req.operational_vls;
    p->hoq_life = req.hoq_life;
    p->vl_high_limit = req.vl_high_limit;
    if (req.link_down_default_state != 0) p->link_down_default_state = req.link_down_default_state;
    p->m_key_violations = req.m_key_violations;
    p->p_key_violations = req.p_key_violations;
    p->q_key_violations = req.q_key_violations;
    if (want == mad::port_state::kDown) {
      // The link retrains at once: the port comes back in Init.
      if (cur == PortState::Active) node_.port_event(*p, PortEvent::Error);
      p->set_state(PortState::Init);
    } else if (want == mad::port_state::kArmed) {
      p->set_state(PortState::Armed);
    } else if (want == mad::port_state::kActive) {
      p->set_state(PortState::Active);
      node_.port_event(*p, PortEvent::Active);
    }
  }
  mad::PortInfo pi;
  pi.m_key = base.m_key;
  pi.gid_prefix = base.gid_prefix;
  pi.lid = base.lid;
  pi.master_sm_lid = base.master_sm_lid;
  pi.capability_mask = node_.is_switch() && external ? 0 : p->capability_mask;
  pi.m_key_lease_period = base.m_key_lease_period;
  pi.local_port_num = in.number();
  const Link* link = p->link();
  const LinkRate rate = link ? link->rate() : LinkRate{};
  const bool has_wire = external && link;
  pi.link_width_enabled = has_wire ? rate.width_bits() : 0;
  pi.link_width_supported = has_wire ? rate.width_bits() : 0;
  pi.link_width_active = has_wire ? rate.width_bits() : 0;
  pi.link_speed_supported = has_wire ? rate.speed_bits() : 0;
  pi.port_state = static_cast<uint8_t>(p->state());
  pi.port_physical_state = static_cast<uint8_t>(p->phys_state());
  pi.link_down_default_state = p->link_down_default_state;
  pi.m_key_protect_bits = base.m_key_protect_bits;
  pi.lmc = base.lmc;
  pi.link_speed_active = has_wire ? rate.speed_bits() : 0;
  pi.link_speed_enabled = has_wire ? rate.speed_bits() : 0;
  pi.neighbor_mtu = p->neighbor_mtu;
  pi.master_sm_sl = base.master_sm_sl;
  pi.vl_cap = p->vl_cap;
  pi.vl_high_limit = p->vl_high_limit;
  pi.vl_arbitration_high_cap = 8;
  pi.vl_arbitration_low_cap = 8;
  pi.mtu_cap = p->mtu_cap;
  pi.hoq_life = p->hoq_life;
  pi.operational_vls = p->operational_vls;
  pi.m_key_violations = p->m_key_violations;
  pi.p_key_violations = p->p_key_violations;
  pi.q_key_violations = p->q_key_violations;
  pi.guid_cap = static_cast<uint8_t>(Port::kGuidCap);
  pi.client_reregister = false;  // a trigger, never read back as set
  pi.subnet_timeout = base.subnet_timeout;
  pi.resp_time_value = p->resp_time_value;
  pi.local_phy_errors = p->local_phy_errors;
  pi.overrun_errors = p->overrun_errors;
  pi.capability_mask2 = p->capability_mask2;
  pi.link_speed_ext_active = has_wire ? rate.speed_ext_bits() : 0;
  pi.link_speed_ext_supported = has_wire ? rate.speed_ext_bits() : 0;
  pi.link_speed_ext_enabled = has_wire ? rate.speed_ext_bits() : 0;
  pi.pack(data_span(data));
  return st::kOk;
}

uint16_t Sma::switch_info(bool set, uint8_t* data) {
  if (!node_.is_switch()) return st::kMethodAttrUnsupported;
  auto& sw = static_cast<Switch&>(node_);
  if (set) {
    const mad::SwitchInfo req = mad::SwitchInfo::unpack(std::span<const uint8_t>(data, 64));
    if (req.linear_fdb_top >= Switch::kLinearFdbCap) return st::kInvalidAttrValue;
    sw.lft_top = req.linear_fdb_top;
    sw.default_port = req.default_port;
    sw.default_mcast_primary = req.default_multicast_primary_port;
    sw.default_mcast_not_primary = req.default_multicast_not_primary_port;
    sw.life_time_value = req.life_time_value;
    if (req.port_state_change) sw.port_state_change = false;  // write 1 to clear
    sw.mft_top = req.multicast_fdb_top;
  }
  mad::SwitchInfo si;
  si.linear_fdb_cap = Switch::kLinearFdbCap;
  si.multicast_fdb_cap = sw.multicast_fdb_cap();
  si.linear_fdb_top = sw.lft_top;
  si.default_port = sw.default_port;
  si.default_multicast_primary_port = sw.default_mcast_primary;
  si.default_multicast_not_primary_port = sw.default_mcast_not_primary;
  si.life_time_value = sw.life_time_value;
  si.port_state_change = sw.port_state_change;
  si.lids_per_port = 0;
  si.partition_enforcement_cap = 0;
  si.multicast_fdb_top = sw.mft_top;
  si.pack(data_span(data));
  return st::kOk;
}

uint16_t Sma::lft(uint32_t mod, bool set, uint8_t* data) {
  if (!node_.is_switch()) return st::kMethodAttrUnsupported;
  auto& sw = static_cast<Switch&>(node_);
  if (mod >= Switch::kLinearFdbCap / mad::LinearForwardingTable::kEntriesPerBlock) return st::kInvalidAttrValue;
  const auto base = static_cast<uint16_t>(mod * mad::LinearForwardingTable::kEntriesPerBlock);
  // The block is the attribute's data as it stands (one byte per LID).
  static_assert(mad::LinearForwardingTable::kSize == 64 && mad::LinearForwardingTable::kEntriesPerBlock == 64);
  const std::span<uint8_t, 64> block(data, 64);
  if (set) sw.set_lft_block(base, block);
  sw.lft_block(base, block);
  return st::kOk;
}

uint16_t Sma::mft(uint32_t mod, bool set, uint8_t* data) {
  if (!node_.is_switch()) return st::kMethodAttrUnsupported;
  auto& sw = static_cast<Switch&>(node_);
  const mad::MftAddress a = mad::mft_decode_modifier(mod);
  const uint32_t first = uint32_t{a.block} * mad::MulticastForwardingTable::kEntriesPerBlock;
  if (first >= sw.multicast_fdb_cap() || a.position >= sw.mft_positions()) return st::kInvalidAttrValue;
  const auto base = static_cast<uint16_t>(mad::MulticastForwardingTable::kMulticastLidBase + first);
  if (set) {
    const auto t = mad::MulticastForwardingTable::unpack(std::span<const uint8_t>(data, 64));
    for (uint16_t i = 0; i < t.port_mask.size(); ++i)
      sw.set_mft(static_cast<uint16_t>(base + i), a.position, t.port_mask[i]);
  }
  mad::MulticastForwardingTable t;
  for (uint16_t i = 0; i < t.port_mask.size(); ++i)
    t.port_mask[i] = sw.mft(static_cast<uint16_t>(base + i), a.position);
  t.pack(data_span(data));
  return st::kOk;
}

uint16_t Sma::pkey_table(Port& in, uint32_t mod, bool set, uint8_t* data) {
  const mad::PKeyTableAddress a = mad::pkey_table_decode_modifier(mod);
  Port* p = node_.is_switch() ? (a.port == 0 ? &node_.port(0) : nullptr) : &in;
  if (!p || p->pkeys.empty()) return st::kInvalidAttrValue;
  const std::size_t first = std::size_t{a.block} * mad::PKeyTable::kEntriesPerBlock;
  if (first >= p->pkeys.size()) return st::kInvalidAttrValue;
  if (set) {
    const auto t = mad::PKeyTable::unpack(std::span<const uint8_t>(data, 64));
    bool changed = false;
    for (std::size_t i = 0; i < t.p_key.size() && first + i < p->pkeys.size(); ++i) {
      changed = changed || p->pkeys[first + i] != t.p_key[i];
      p->pkeys[first + i] = t.p_key[i];
    }
    if (changed) node_.port_event(*p, PortEvent::PkeyChange);
  }
  mad::PKeyTable t;
  for (std::size_t i = 0; i < t.p_key.size() && first + i < p->pkeys.size(); ++i) t.p_key[i] = p->pkeys[first + i];
  t.pack(data_span(data));
  return st::kOk;
}

uint16_t Sma::guid_info(Port& in, uint32_t mod, bool set, uint8_t* data) {
  Port& p = node_.is_switch() ? node_.port(0) : in;
  const std::size_t first = std::size_t{mod} * mad::GuidInfo::kEntriesPerBlock;
  if (first >= Port::kGuidCap) return st::kInvalidAttrValue;
  if (set) {
    if (!p.guid_table) p.guid_table = std::make_unique<std::array<uint64_t, Port::kGuidCap>>();
    const auto t = mad::GuidInfo::unpack(std::span<const uint8_t>(data, 64));
    for (std::size_t i = 0; i < t.guid.size() && first + i < Port::kGuidCap; ++i)
      if (first + i != 0) (*p.guid_table)[first + i] = t.guid[i];  // index 0 is read-only
  }
  mad::GuidInfo t;
  for (std::size_t i = 0; i < t.guid.size() && first + i < Port::kGuidCap; ++i)
    t.guid[i] = first + i == 0 ? p.guid() : p.guid_table ? (*p.guid_table)[first + i] : 0;
  t.pack(data_span(data));
  return st::kOk;
}

// SLtoVLMappingTable: on a switch the modifier names the input port (15:8)
// and the output port (7:0); a CA answers for the port the SMP came in by.
uint16_t Sma::sl_to_vl(Port& in, uint32_t mod, bool set, uint8_t* data) {
  Port* out = &in;
  std::size_t input = 0;
  if (node_.is_switch()) {
    const uint32_t o = mod & 0xFF, i = (mod >> 8) & 0xFF;
    if (o > node_.num_ports() || i > node_.num_ports()) return st::kInvalidAttrValue;
    out = &node_.port(static_cast<uint8_t>(o));
    input = i;
  }
  if (set) {
    if (out->sl_to_vl.size() <= input) out->sl_to_vl.resize(input + 1, std::array<uint8_t, 8>{});
    std::copy_n(data, mad::SlToVlTable::kSize, out->sl_to_vl[input].begin());
  }
  std::fill_n(data, 64, uint8_t{0});
  if (input < out->sl_to_vl.size()) std::copy_n(out->sl_to_vl[input].begin(), mad::SlToVlTable::kSize, data);
  return st::kOk;
}

// VLArbitrationTable: the modifier's 31:16 is the block (1..4), 7:0 the
// output port on a switch; a CA answers for the port the SMP came in by.
uint16_t Sma::vl_arbitration(Port& in, uint32_t mod, bool set, uint8_t* data) {
  const uint32_t block = mod >> 16;
  if (block < 1 || block > 4) return st::kInvalidAttrValue;
  Port* p = &in;
  if (node_.is_switch()) {
    if ((mod & 0xFF) > node_.num_ports()) return st::kInvalidAttrValue;
    p = &node_.port(static_cast<uint8_t>(mod & 0xFF));
  }
  if (set) {
    if (!p->vl_arbitration) p->vl_arbitration = std::make_unique<std::array<std::array<uint8_t, 64>, 4>>();
    // Each entry's VL is 4 bits; the reserved high nibble reads as zero.
    const auto t = mad::VlArbitrationTable::unpack(std::span<const uint8_t>(data, 64));
    t.pack((*p->vl_arbitration)[block - 1]);
  }
  if (p->vl_arbitration) std::copy_n((*p->vl_arbitration)[block - 1].begin(), 64, data);
  else std::fill_n(data, 64, uint8_t{0});
  return st::kOk;
}

}  // namespace ibfab::fabric
