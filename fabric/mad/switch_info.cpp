#include "fabric/mad/switch_info.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SwitchInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(linear_fdb_cap);
  w.u16(random_fdb_cap);
  w.u16(multicast_fdb_cap);
  w.u16(linear_fdb_top);
  w.u8(default_port);
  w.u8(default_multicast_primary_port);
  w.u8(default_multicast_not_primary_port);
  w.u8(to_u8(put_bits(life_time_value, 5, 3) | put_bits(port_state_change, 1, 2) |
             put_bits(optimized_sl_to_vl_mapping_programming, 2, 0)));
  w.u16(lids_per_port);
  w.u16(partition_enforcement_cap);
  w.u8(to_u8(put_bits(inbound_enforcement_cap, 1, 7) | put_bits(outbound_enforcement_cap, 1, 6) |
             put_bits(filter_raw_inbound_cap, 1, 5) | put_bits(filter_raw_outbound_cap, 1, 4) |
             put_bits(enhanced_port0, 1, 3)));
  w.u8(0);
  w.u16(multicast_fdb_top);
}

SwitchInfo SwitchInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  SwitchInfo s;
  s.linear_fdb_cap = r.u16();
  s.random_fdb_cap = r.u16();
  s.multicast_fdb_cap = r.u16();
  s.linear_fdb_top = r.u16();
  s.default_port = r.u8();
  s.default_multicast_primary_port = r.u8();
  s.default_multicast_not_primary_port = r.u8();
  uint8_t b = r.u8();
  s.life_time_value = get_bits(b, 5, 3);
  s.port_state_change = get_bits<bool>(b, 1, 2);
  s.optimized_sl_to_vl_mapping_programming = get_bits(b, 2, 0);
  s.lids_per_port = r.u16();
  s.partition_enforcement_cap = r.u16();
  b = r.u8();
  s.inbound_enforcement_cap = get_bits<bool>(b, 1, 7);
  s.outbound_enforcement_cap = get_bits<bool>(b, 1, 6);
  s.filter_raw_inbound_cap = get_bits<bool>(b, 1, 5);
  s.filter_raw_outbound_cap = get_bits<bool>(b, 1, 4);
  s.enhanced_port0 = get_bits<bool>(b, 1, 3);
  r.skip(1);
  s.multicast_fdb_top = r.u16();
  return s;
}

}  // namespace ibfab::mad
