#include "fabric/mad/cm_sidr.h"

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void SidrReq::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(request_id);
  w.u16(p_key);
  w.u16(0);
  w.u64(service_id);
  w.bytes(private_data.data(), private_data.size());
}

SidrReq SidrReq::unpack(std::span<const uint8_t, kSize> in) {
  wire::Reader r(in);
  SidrReq m;
  m.request_id = r.u32();
  m.p_key = r.u16();
  r.skip(2);
  m.service_id = r.u64();
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

void SidrRep::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(request_id);
  w.u8(status);
  w.u8(additional_info_length);
  w.u16(0);
  w.u32((qpn & 0xffffffu) << 8);
  w.u64(service_id);
  w.u32(q_key);
  w.bytes(additional_info.data(), additional_info.size());
  w.bytes(private_data.data(), private_data.size());
}

SidrRep SidrRep::unpack(std::span<const uint8_t, kSize> in) {
  wire::Reader r(in);
  SidrRep m;
  m.request_id = r.u32();
  m.status = r.u8();
  m.additional_info_length = r.u8();
  r.skip(2);
  m.qpn = r.u32() >> 8;
  m.service_id = r.u64();
  m.q_key = r.u32();
  r.bytes(m.additional_info.data(), m.additional_info.size());
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
