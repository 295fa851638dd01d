#include "fabric/mad/sa/pkey_table_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void PKeyTableRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u16(block);
  w.u8(port);
  w.zeros(kBlockOffset - w.pos());
  table.pack(data.subspan(kBlockOffset, PKeyTable::kSize));
}

PKeyTableRecord PKeyTableRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PKeyTableRecord v;
  v.lid = r.u16();
  v.block = r.u16();
  v.port = r.u8();
  v.table = PKeyTable::unpack(data.subspan(std::min(kBlockOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
