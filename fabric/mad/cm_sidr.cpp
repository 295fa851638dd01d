#include "fabric/mad/cm_sidr.h"

#include <algorithm>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::mad {

using wire::load_be16;
using wire::load_be32;
using wire::load_be64;
using wire::store_be16;
using wire::store_be32;
using wire::store_be64;

// SIDR_REQ: RequestID 0, P_Key 4, reserved 6, ServiceID 8, PrivateData 16.
void SidrReq::pack(std::span<uint8_t, kCmDataSize> out) const {
  std::fill(out.begin(), out.end(), 0);
  store_be32(&out[0], request_id);
  store_be16(&out[4], p_key);
  store_be64(&out[8], service_id);
  std::copy(private_data.begin(), private_data.end(), out.begin() + 16);
}

SidrReq SidrReq::unpack(std::span<const uint8_t, kCmDataSize> in) {
  SidrReq r;
  r.request_id = load_be32(&in[0]);
  r.p_key = load_be16(&in[4]);
  r.service_id = load_be64(&in[8]);
  std::copy_n(in.begin() + 16, kPrivateDataSize, r.private_data.begin());
  return r;
}

// SIDR_REP: RequestID 0, Status 4, AddInfoLength 5, reserved 6, QPN 8 (24
// bits, then 8 reserved), ServiceID 12, Q_Key 20, AdditionalInfo 24,
// PrivateData 96.
void SidrRep::pack(std::span<uint8_t, kCmDataSize> out) const {
  std::fill(out.begin(), out.end(), 0);
  store_be32(&out[0], request_id);
  out[4] = status;
  out[5] = additional_info_length;
  store_be32(&out[8], (qpn & 0xFFFFFF) << 8);
  store_be64(&out[12], service_id);
  store_be32(&out[20], q_key);
  std::copy(additional_info.begin(), additional_info.end(), out.begin() + 24);
  std::copy(private_data.begin(), private_data.end(), out.begin() + 96);
}

SidrRep SidrRep::unpack(std::span<const uint8_t, kCmDataSize> in) {
  SidrRep r;
  r.request_id = load_be32(&in[0]);
  r.status = in[4];
  r.additional_info_length = in[5];
  r.qpn = load_be32(&in[8]) >> 8;
  r.service_id = load_be64(&in[12]);
  r.q_key = load_be32(&in[20]);
  std::copy_n(in.begin() + 24, kAdditionalInfoSize, r.additional_info.begin());
  std::copy_n(in.begin() + 96, kPrivateDataSize, r.private_data.begin());
  return r;
}

void make_cm_mad(std::span<uint8_t, 256> mad, uint16_t attribute_id, uint64_t tid) {
  std::fill(mad.begin(), mad.end(), 0);
  mad[0] = wire::MadHeader::kBaseVersion;
  mad[1] = kCmClass;
  mad[2] = kCmClassVersion;
  mad[3] = wire::mad_method::kSend;
  store_be64(&mad[8], tid);
  store_be16(&mad[16], attribute_id);
}

}  // namespace ibfab::mad
