#include "fabric/mad/cm_dreq.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void CmDreq::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.u32(put_bits(remote_qpn_eecn, 24, 8));
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmDreq> CmDreq::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmDreq m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  m.remote_qpn_eecn = get_bits<uint32_t>(r.u32(), 24, 8);
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
