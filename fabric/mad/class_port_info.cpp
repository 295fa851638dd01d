#include "fabric/mad/class_port_info.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void ClassPortInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u8(base_version);
  w.u8(class_version);
  w.u16(capability_mask);
  w.u32(put_bits(capability_mask2, 27, 5) | put_bits(resp_time_value, 5, 0));
  w.bytes(redirect_gid.data(), redirect_gid.size());
  w.u32(put_bits(redirect_tc, 8, 24) | put_bits(redirect_sl, 4, 20) | put_bits(redirect_fl, 20, 0));
  w.u16(redirect_lid);
  w.u16(redirect_p_key);
  w.u32(put_bits(redirect_qp, 24, 0));
  w.u32(redirect_q_key);
  w.bytes(trap_gid.data(), trap_gid.size());
  w.u32(put_bits(trap_tc, 8, 24) | put_bits(trap_sl, 4, 20) | put_bits(trap_fl, 20, 0));
  w.u16(trap_lid);
  w.u16(trap_p_key);
  w.u32(put_bits(trap_hl, 8, 24) | put_bits(trap_qp, 24, 0));
  w.u32(trap_q_key);
}

ClassPortInfo ClassPortInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  ClassPortInfo c;
  c.base_version = r.u8();
  c.class_version = r.u8();
  c.capability_mask = r.u16();
  uint32_t word = r.u32();
  c.capability_mask2 = get_bits<uint32_t>(word, 27, 5);
  c.resp_time_value = get_bits(word, 5, 0);
  r.bytes(c.redirect_gid.data(), c.redirect_gid.size());
  word = r.u32();
  c.redirect_tc = get_bits(word, 8, 24);
  c.redirect_sl = get_bits(word, 4, 20);
  c.redirect_fl = get_bits<uint32_t>(word, 20, 0);
  c.redirect_lid = r.u16();
  c.redirect_p_key = r.u16();
  c.redirect_qp = get_bits<uint32_t>(r.u32(), 24, 0);
  c.redirect_q_key = r.u32();
  r.bytes(c.trap_gid.data(), c.trap_gid.size());
  word = r.u32();
  c.trap_tc = get_bits(word, 8, 24);
  c.trap_sl = get_bits(word, 4, 20);
  c.trap_fl = get_bits<uint32_t>(word, 20, 0);
  c.trap_lid = r.u16();
  c.trap_p_key = r.u16();
  word = r.u32();
  c.trap_hl = get_bits(word, 8, 24);
  c.trap_qp = get_bits<uint32_t>(word, 24, 0);
  c.trap_q_key = r.u32();
  return c;
}

}  // namespace ibfab::mad
