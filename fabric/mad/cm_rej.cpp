#include "fabric/mad/cm_rej.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void CmRej::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.u8(to_u8(put_bits(message_rejected, 2, 6)));
  w.u8(to_u8(put_bits(reject_info_length, 7, 1)));
  w.u16(static_cast<uint16_t>(reason));
  w.bytes(ari.data(), ari.size());
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmRej> CmRej::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmRej m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  m.message_rejected = get_bits(r.u8(), 2, 6);
  m.reject_info_length = get_bits(r.u8(), 7, 1);
  m.reason = static_cast<CmRejReason>(r.u16());
  r.bytes(m.ari.data(), m.ari.size());
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
