#include "fabric/mad/sa/inform_info_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void InformInfoRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.bytes(subscriber_gid.raw.data(), subscriber_gid.raw.size());
  w.u16(subscriber_enum);
  w.zeros(6);
  inform_info.pack(data.subspan(kInformInfoOffset, InformInfo::kSize));
}

InformInfoRecord InformInfoRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  InformInfoRecord v;
  r.bytes(v.subscriber_gid.raw.data(), v.subscriber_gid.raw.size());
  v.subscriber_enum = r.u16();
  v.inform_info = InformInfo::unpack(data.subspan(std::min(kInformInfoOffset, data.size())));
  return v;
}

}  // namespace ibfab::mad
