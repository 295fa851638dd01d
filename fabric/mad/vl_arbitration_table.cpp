#include "fabric/mad/vl_arbitration_table.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void VlArbitrationTable::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  for (const Entry& e : entry) {
    w.u8(e.vl & 0xF);
    w.u8(e.weight);
  }
}

VlArbitrationTable VlArbitrationTable::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  VlArbitrationTable t;
  for (Entry& e : t.entry) {
    e.vl = r.u8() & 0xF;
    e.weight = r.u8();
  }
  return t;
}

}  // namespace ibfab::mad
