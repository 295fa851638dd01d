#include "fabric/mad/sa/switch_info_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SwitchInfoRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u16(0);
  switch_info.pack(data.subspan(kSwitchInfoOffset, SwitchInfo::kSize));
}

SwitchInfoRecord SwitchInfoRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  SwitchInfoRecord s;
  s.lid = r.u16();
  s.switch_info = SwitchInfo::unpack(data.subspan(std::min(kSwitchInfoOffset, data.size())));
  return s;
}

}  // namespace ibfab::mad
