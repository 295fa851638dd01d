#include "fabric/mad/sl_to_vl_table.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SlToVlTable::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  for (std::size_t sl = 0; sl < vl.size(); sl += 2)
    w.u8(static_cast<uint8_t>((vl[sl] & 0xF) << 4 | (vl[sl + 1] & 0xF)));
}

SlToVlTable SlToVlTable::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  SlToVlTable t;
  for (std::size_t sl = 0; sl < t.vl.size(); sl += 2) {
    const uint8_t b = r.u8();
    t.vl[sl] = b >> 4;
    t.vl[sl + 1] = b & 0xF;
  }
  return t;
}

}  // namespace ibfab::mad
