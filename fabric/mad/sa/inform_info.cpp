#include "fabric/mad/sa/inform_info.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void InformInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.bytes(gid.raw.data(), gid.raw.size());
  w.u16(lid_range_begin);
  w.u16(lid_range_end);
  w.u16(0);
  w.u8(is_generic);
  w.u8(subscribe);
  w.u16(type);
  w.u16(trap_number);
  w.u32(put_bits(qpn, 24, 8) | put_bits(resp_time_value, 5, 0));
  w.u8(0);
  w.u24(producer_type & 0xFFFFFF);
}

InformInfo InformInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  InformInfo i;
  r.bytes(i.gid.raw.data(), i.gid.raw.size());
  i.lid_range_begin = r.u16();
  i.lid_range_end = r.u16();
  r.skip(2);
  i.is_generic = r.u8();
  i.subscribe = r.u8();
  i.type = r.u16();
  i.trap_number = r.u16();
  const uint32_t word = r.u32();
  i.qpn = get_bits<uint32_t>(word, 24, 8);
  i.resp_time_value = get_bits(word, 5, 0);
  r.skip(1);
  i.producer_type = r.u24();
  return i;
}

}  // namespace ibfab::mad
