#include "fabric/mad/node_description.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace ibfab::mad {

void NodeDescription::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  const std::size_t n = std::min(text.size(), kSize);
  std::memcpy(data.data(), text.data(), n);
  std::memset(data.data() + n, 0, kSize - n);
}

NodeDescription NodeDescription::unpack(std::span<const uint8_t> data) {
  const std::size_t limit = std::min(data.size(), kSize);
  const auto* begin = data.data();
  const auto* nul = std::find(begin, begin + limit, uint8_t{0});
  return NodeDescription{std::string(reinterpret_cast<const char*>(begin),
                                     static_cast<std::size_t>(nul - begin))};
}

}  // namespace ibfab::mad
