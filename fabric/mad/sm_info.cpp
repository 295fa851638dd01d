#include "fabric/mad/sm_info.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SmInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u64(guid);
  w.u64(sm_key);
  w.u32(act_count);
  w.u8(to_u8(put_bits(priority, 4, 4) | put_bits(sm_state, 4, 0)));
  w.zeros(3);
}

SmInfo SmInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  SmInfo s;
  s.guid = r.u64();
  s.sm_key = r.u64();
  s.act_count = r.u32();
  const uint8_t b = r.u8();
  s.priority = get_bits(b, 4, 4);
  s.sm_state = get_bits(b, 4, 0);
  return s;
}

}  // namespace ibfab::mad
