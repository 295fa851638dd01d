#include "fabric/mad/sa/mcmember_record.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void McMemberRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.bytes(mgid.raw.data(), mgid.raw.size());
  w.bytes(port_gid.raw.data(), port_gid.raw.size());
  w.u32(q_key);
  w.u16(mlid);
  w.u8(to_u8(put_bits(mtu_selector, 2, 6) | put_bits(mtu, 6, 0)));
  w.u8(tclass);
  w.u16(p_key);
  w.u8(to_u8(put_bits(rate_selector, 2, 6) | put_bits(rate, 6, 0)));
  w.u8(to_u8(put_bits(packet_life_time_selector, 2, 6) | put_bits(packet_life_time, 6, 0)));
  w.u32(put_bits(sl, 4, 28) | put_bits(flow_label, 20, 8) | put_bits(hop_limit, 8, 0));
  w.u8(to_u8(put_bits(scope, 4, 4) | put_bits(join_state, 4, 0)));
  w.u8(to_u8(put_bits(proxy_join, 1, 7)));
  w.u16(0);
}

McMemberRecord McMemberRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  McMemberRecord m;
  r.bytes(m.mgid.raw.data(), m.mgid.raw.size());
  r.bytes(m.port_gid.raw.data(), m.port_gid.raw.size());
  m.q_key = r.u32();
  m.mlid = r.u16();
  uint8_t b = r.u8();
  m.mtu_selector = get_bits(b, 2, 6);
  m.mtu = get_bits(b, 6, 0);
  m.tclass = r.u8();
  m.p_key = r.u16();
  b = r.u8();
  m.rate_selector = get_bits(b, 2, 6);
  m.rate = get_bits(b, 6, 0);
  b = r.u8();
  m.packet_life_time_selector = get_bits(b, 2, 6);
  m.packet_life_time = get_bits(b, 6, 0);
  const uint32_t word = r.u32();
  m.sl = get_bits(word, 4, 28);
  m.flow_label = get_bits<uint32_t>(word, 20, 8);
  m.hop_limit = get_bits(word, 8, 0);
  b = r.u8();
  m.scope = get_bits(b, 4, 4);
  m.join_state = get_bits(b, 4, 0);
  m.proxy_join = get_bits<bool>(r.u8(), 1, 7);
  return m;
}

}  // namespace ibfab::mad
