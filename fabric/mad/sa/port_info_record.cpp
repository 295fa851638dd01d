#include "fabric/mad/sa/port_info_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void PortInfoRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(endport_lid);
  w.u8(port_num);
  w.u8(options);
  port_info.pack(data.subspan(kPortInfoOffset, PortInfo::kSize));
}

PortInfoRecord PortInfoRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PortInfoRecord p;
  p.endport_lid = r.u16();
  p.port_num = r.u8();
  p.options = r.u8();
  p.port_info = PortInfo::unpack(data.subspan(std::min(kPortInfoOffset, data.size())));
  return p;
}

}  // namespace ibfab::mad
