#include "fabric/mad/sa/sm_info_record.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SmInfoRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u16(0);
  std::array<uint8_t, SmInfo::kSize> b{};
  sm_info.pack(b);
  std::memcpy(data.data() + kSmInfoOffset, b.data(), kSmInfoBytes);
}

SmInfoRecord SmInfoRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  SmInfoRecord v;
  v.lid = r.u16();
  std::array<uint8_t, SmInfo::kSize> b{};
  const auto from = data.subspan(std::min(kSmInfoOffset, data.size()));
  std::memcpy(b.data(), from.data(), std::min(from.size(), kSmInfoBytes));
  v.sm_info = SmInfo::unpack(b);
  return v;
}

}  // namespace ibfab::mad
