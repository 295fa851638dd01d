#include "fabric/mad/forwarding_tables.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void LinearForwardingTable::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.bytes(port.data(), port.size());
}

LinearForwardingTable LinearForwardingTable::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  LinearForwardingTable t;
  for (auto& p : t.port) p = r.u8();
  return t;
}

void MulticastForwardingTable::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  for (uint16_t m : port_mask) w.u16(m);
}

MulticastForwardingTable MulticastForwardingTable::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  MulticastForwardingTable t;
  for (auto& m : t.port_mask) m = r.u16();
  return t;
}

}  // namespace ibfab::mad
