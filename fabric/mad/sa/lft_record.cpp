#include "fabric/mad/sa/lft_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void LftRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u16(block);
  w.zeros(kBlockOffset - w.pos());
  lft.pack(data.subspan(kBlockOffset, LinearForwardingTable::kSize));
}

LftRecord LftRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  LftRecord v;
  v.lid = r.u16();
  v.block = r.u16();
  v.lft = LinearForwardingTable::unpack(data.subspan(std::min(kBlockOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
