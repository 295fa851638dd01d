#include "fabric/mad/sa/link_record.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void LinkRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(from_lid);
  w.u8(from_port);
  w.u8(to_port);
  w.u16(to_lid);
}

LinkRecord LinkRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  LinkRecord l;
  l.from_lid = r.u16();
  l.from_port = r.u8();
  l.to_port = r.u8();
  l.to_lid = r.u16();
  return l;
}

}  // namespace ibfab::mad
