#include "fabric/mad/sa/service_record.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void ServiceRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u64(service_id);
  w.bytes(service_gid.raw.data(), service_gid.raw.size());
  w.u16(service_p_key);
  w.u16(0);
  w.u32(service_lease);
  w.bytes(service_key.data(), service_key.size());
  w.bytes(service_name.data(), service_name.size());
  w.bytes(data8.data(), data8.size());
  for (uint16_t v : data16) w.u16(v);
  for (uint32_t v : data32) w.u32(v);
  for (uint64_t v : data64) w.u64(v);
}

ServiceRecord ServiceRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  ServiceRecord s;
  s.service_id = r.u64();
  r.bytes(s.service_gid.raw.data(), s.service_gid.raw.size());
  s.service_p_key = r.u16();
  r.skip(2);
  s.service_lease = r.u32();
  r.bytes(s.service_key.data(), s.service_key.size());
  r.bytes(s.service_name.data(), s.service_name.size());
  r.bytes(s.data8.data(), s.data8.size());
  for (uint16_t& v : s.data16) v = r.u16();
  for (uint32_t& v : s.data32) v = r.u32();
  for (uint64_t& v : s.data64) v = r.u64();
  return s;
}

}  // namespace ibfab::mad
