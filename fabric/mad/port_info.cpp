#include "fabric/mad/port_info.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void PortInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u64(m_key);
  w.u64(gid_prefix);
  w.u16(lid);
  w.u16(master_sm_lid);
  w.u32(capability_mask);
  w.u16(diag_code);
  w.u16(m_key_lease_period);
  w.u8(local_port_num);
  w.u8(link_width_enabled);
  w.u8(link_width_supported);
  w.u8(link_width_active);
  w.u8(to_u8(put_bits(link_speed_supported, 4, 4) | put_bits(port_state, 4, 0)));
  w.u8(to_u8(put_bits(port_physical_state, 4, 4) | put_bits(link_down_default_state, 4, 0)));
  w.u8(to_u8(put_bits(m_key_protect_bits, 2, 6) | put_bits(lmc, 3, 0)));
  w.u8(to_u8(put_bits(link_speed_active, 4, 4) | put_bits(link_speed_enabled, 4, 0)));
  w.u8(to_u8(put_bits(neighbor_mtu, 4, 4) | put_bits(master_sm_sl, 4, 0)));
  w.u8(to_u8(put_bits(vl_cap, 4, 4) | put_bits(init_type, 4, 0)));
  w.u8(vl_high_limit);
  w.u8(vl_arbitration_high_cap);
  w.u8(vl_arbitration_low_cap);
  w.u8(to_u8(put_bits(init_type_reply, 4, 4) | put_bits(mtu_cap, 4, 0)));
  w.u8(to_u8(put_bits(vl_stall_count, 3, 5) | put_bits(hoq_life, 5, 0)));
  w.u8(to_u8(put_bits(operational_vls, 4, 4) | put_bits(partition_enforcement_inbound, 1, 3) |
             put_bits(partition_enforcement_outbound, 1, 2) | put_bits(filter_raw_inbound, 1, 1) |
             put_bits(filter_raw_outbound, 1, 0)));
  w.u16(m_key_violations);
  w.u16(p_key_violations);
  w.u16(q_key_violations);
  w.u8(guid_cap);
  w.u8(to_u8(put_bits(client_reregister, 1, 7) |
             put_bits(multicast_pkey_trap_suppression_enabled, 2, 5) |
             put_bits(subnet_timeout, 5, 0)));
  w.u8(to_u8(put_bits(resp_time_value, 5, 0)));
  w.u8(to_u8(put_bits(local_phy_errors, 4, 4) | put_bits(overrun_errors, 4, 0)));
  w.u16(max_credit_hint);
  w.u8(0);
  w.u24(link_round_trip_latency & 0xFFFFFF);
  w.u16(capability_mask2);
  w.u8(to_u8(put_bits(link_speed_ext_active, 4, 4) | put_bits(link_speed_ext_supported, 4, 0)));
  w.u8(to_u8(put_bits(link_speed_ext_enabled, 5, 0)));
}

PortInfo PortInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PortInfo p;
  p.m_key = r.u64();
  p.gid_prefix = r.u64();
  p.lid = r.u16();
  p.master_sm_lid = r.u16();
  p.capability_mask = r.u32();
  p.diag_code = r.u16();
  p.m_key_lease_period = r.u16();
  p.local_port_num = r.u8();
  p.link_width_enabled = r.u8();
  p.link_width_supported = r.u8();
  p.link_width_active = r.u8();
  uint8_t b = r.u8();
  p.link_speed_supported = get_bits(b, 4, 4);
  p.port_state = get_bits(b, 4, 0);
  b = r.u8();
  p.port_physical_state = get_bits(b, 4, 4);
  p.link_down_default_state = get_bits(b, 4, 0);
  b = r.u8();
  p.m_key_protect_bits = get_bits(b, 2, 6);
  p.lmc = get_bits(b, 3, 0);
  b = r.u8();
  p.link_speed_active = get_bits(b, 4, 4);
  p.link_speed_enabled = get_bits(b, 4, 0);
  b = r.u8();
  p.neighbor_mtu = get_bits(b, 4, 4);
  p.master_sm_sl = get_bits(b, 4, 0);
  b = r.u8();
  p.vl_cap = get_bits(b, 4, 4);
  p.init_type = get_bits(b, 4, 0);
  p.vl_high_limit = r.u8();
  p.vl_arbitration_high_cap = r.u8();
  p.vl_arbitration_low_cap = r.u8();
  b = r.u8();
  p.init_type_reply = get_bits(b, 4, 4);
  p.mtu_cap = get_bits(b, 4, 0);
  b = r.u8();
  p.vl_stall_count = get_bits(b, 3, 5);
  p.hoq_life = get_bits(b, 5, 0);
  b = r.u8();
  p.operational_vls = get_bits(b, 4, 4);
  p.partition_enforcement_inbound = get_bits<bool>(b, 1, 3);
  p.partition_enforcement_outbound = get_bits<bool>(b, 1, 2);
  p.filter_raw_inbound = get_bits<bool>(b, 1, 1);
  p.filter_raw_outbound = get_bits<bool>(b, 1, 0);
  p.m_key_violations = r.u16();
  p.p_key_violations = r.u16();
  p.q_key_violations = r.u16();
  p.guid_cap = r.u8();
  b = r.u8();
  p.client_reregister = get_bits<bool>(b, 1, 7);
  p.multicast_pkey_trap_suppression_enabled = get_bits(b, 2, 5);
  p.subnet_timeout = get_bits(b, 5, 0);
  p.resp_time_value = get_bits(r.u8(), 5, 0);
  b = r.u8();
  p.local_phy_errors = get_bits(b, 4, 4);
  p.overrun_errors = get_bits(b, 4, 0);
  p.max_credit_hint = r.u16();
  r.skip(1);
  p.link_round_trip_latency = r.u24();
  p.capability_mask2 = r.u16();
  b = r.u8();
  p.link_speed_ext_active = get_bits(b, 4, 4);
  p.link_speed_ext_supported = get_bits(b, 4, 0);
  p.link_speed_ext_enabled = get_bits(r.u8(), 5, 0);
  return p;
}

}  // namespace ibfab::mad
