#include "fabric/mad/sa/mft_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void MftRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u16(static_cast<uint16_t>((position & 0xF) << 12 | (block & 0x1FF)));
  w.zeros(kBlockOffset - w.pos());
  mft.pack(data.subspan(kBlockOffset, MulticastForwardingTable::kSize));
}

MftRecord MftRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  MftRecord v;
  v.lid = r.u16();
  const uint16_t pb = r.u16();
  v.position = static_cast<uint8_t>(pb >> 12);
  v.block = pb & 0x1FF;
  v.mft = MulticastForwardingTable::unpack(data.subspan(std::min(kBlockOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
