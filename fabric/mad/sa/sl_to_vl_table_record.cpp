#include "fabric/mad/sa/sl_to_vl_table_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SlToVlTableRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u8(input_port);
  w.u8(output_port);
  w.u32(0);
  table.pack(data.subspan(kTableOffset, SlToVlTable::kSize));
}

SlToVlTableRecord SlToVlTableRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  SlToVlTableRecord v;
  v.lid = r.u16();
  v.input_port = r.u8();
  v.output_port = r.u8();
  v.table = SlToVlTable::unpack(data.subspan(std::min(kTableOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
