#include "fabric/mad/sa/guid_info_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void GuidInfoRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u8(block);
  w.zeros(kBlockOffset - w.pos());
  guid_info.pack(data.subspan(kBlockOffset, GuidInfo::kSize));
}

GuidInfoRecord GuidInfoRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  GuidInfoRecord v;
  v.lid = r.u16();
  v.block = r.u8();
  v.guid_info = GuidInfo::unpack(data.subspan(std::min(kBlockOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
