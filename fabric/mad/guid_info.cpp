#include "fabric/mad/guid_info.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void GuidInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  for (uint64_t g : guid) w.u64(g);
}

GuidInfo GuidInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  GuidInfo t;
  for (auto& g : t.guid) g = r.u64();
  return t;
}

}  // namespace ibfab::mad
