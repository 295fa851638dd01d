#include "fabric/mad/sa/pkey_table_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void PKeyTableRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u8(static_cast<uint8_t>(block));  // little-endian: see the header
  w.u8(static_cast<uint8_t>(block >> 8));
  w.u8(port);
  w.zeros(kBlockOffset - w.pos());
  table.pack(data.subspan(kBlockOffset, PKeyTable::kSize));
}

PKeyTableRecord PKeyTableRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PKeyTableRecord v;
  v.lid = r.u16();
  v.block = r.u8();
  v.block = static_cast<uint16_t>(v.block | r.u8() << 8);
  v.port = r.u8();
  v.table = PKeyTable::unpack(data.subspan(std::min(kBlockOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
