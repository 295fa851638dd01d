#include "fabric/mad/cm_mra.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void CmMra::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.u8(to_u8(put_bits(message_mraed, 2, 6)));
  w.u8(to_u8(put_bits(service_timeout, 5, 3)));
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmMra> CmMra::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmMra m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  m.message_mraed = get_bits(r.u8(), 2, 6);
  m.service_timeout = get_bits(r.u8(), 5, 3);
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
