#include "fabric/mad/sa/vl_arbitration_table_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void VlArbitrationTableRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u8(port);
  w.u8(block);
  w.zeros(kBlockOffset - w.pos());
  table.pack(data.subspan(kBlockOffset, VlArbitrationTable::kSize));
}

VlArbitrationTableRecord VlArbitrationTableRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  VlArbitrationTableRecord v;
  v.lid = r.u16();
  v.port = r.u8();
  v.block = r.u8();
  v.table = VlArbitrationTable::unpack(data.subspan(std::min(kBlockOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
