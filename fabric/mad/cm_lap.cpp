#include "fabric/mad/cm_lap.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void CmLap::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.u32(0);
  w.u32(put_bits(remote_qpn_eecn, 24, 8) | put_bits(remote_cm_response_timeout, 5, 3));
  w.u32(0);
  alternate_path.pack_lap(out.subspan<kAlternatePathOffset, CmPath::kSize>());
  w.seek(kPrivateDataOffset);
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmLap> CmLap::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmLap m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  r.skip(4);
  const uint32_t word = r.u32();
  m.remote_qpn_eecn = get_bits<uint32_t>(word, 24, 8);
  m.remote_cm_response_timeout = get_bits(word, 5, 3);
  m.alternate_path = CmPath::unpack_lap(in.first<kSize>().subspan<kAlternatePathOffset, CmPath::kSize>());
  r.seek(kPrivateDataOffset);
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

void CmApr::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.u8(additional_info_length);
  w.u8(static_cast<uint8_t>(ap_status));
  w.u16(0);
  w.bytes(additional_info.data(), additional_info.size());
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmApr> CmApr::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmApr m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  m.additional_info_length = r.u8();
  m.ap_status = static_cast<CmAprStatus>(r.u8());
  r.skip(2);
  r.bytes(m.additional_info.data(), m.additional_info.size());
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
