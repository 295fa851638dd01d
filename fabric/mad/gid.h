#pragma once
// A 128-bit GID as it appears on the wire: 16 bytes, network order.
#include <array>
#include <cstdint>

namespace ibfab::mad {

using Gid = std::array<uint8_t, 16>;

}  // namespace ibfab::mad
