#include "fabric/mad/pkey_table.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void PKeyTable::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  for (uint16_t k : p_key) w.u16(k);
}

PKeyTable PKeyTable::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PKeyTable t;
  for (auto& k : t.p_key) k = r.u16();
  return t;
}

}  // namespace ibfab::mad
