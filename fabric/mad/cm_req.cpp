#include "fabric/mad/cm_req.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void CmReq::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(put_bits(vendor_id, 24, 0));
  w.u64(service_id);
  w.u64(local_ca_guid);
  w.u32(0);
  w.u32(local_qkey);
  w.u32(put_bits(local_qpn, 24, 8) | responder_resources);
  w.u32(put_bits(local_eecn, 24, 8) | initiator_depth);
  w.u32(put_bits(remote_eecn, 24, 8) | put_bits(remote_cm_response_timeout, 5, 3) |
        put_bits(transport_service_type, 2, 1) | put_bits(end_to_end_flow_control, 1, 0));
  w.u32(put_bits(starting_psn, 24, 8) | put_bits(local_cm_response_timeout, 5, 3) |
        put_bits(retry_count, 3, 0));
  w.u16(partition_key);
  w.u8(to_u8(put_bits(path_mtu, 4, 4) | put_bits(rdc_exists, 1, 3) | put_bits(rnr_retry_count, 3, 0)));
  w.u8(to_u8(put_bits(max_cm_retries, 4, 4) | put_bits(srq, 1, 3) |
             put_bits(extended_transport_type, 3, 0)));
  primary_path.pack_req(out.subspan<kPrimaryPathOffset, CmPath::kSize>());
  alternate_path.pack_req(out.subspan<kAlternatePathOffset, CmPath::kSize>());
  out[kPrivateDataOffset - 1] |= to_u8(put_bits(sap_supported, 1, 2));
  w.seek(kPrivateDataOffset);
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmReq> CmReq::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmReq m;
  m.local_comm_id = r.u32();
  m.vendor_id = get_bits<uint32_t>(r.u32(), 24, 0);
  m.service_id = r.u64();
  m.local_ca_guid = r.u64();
  r.skip(4);
  m.local_qkey = r.u32();
  uint32_t word = r.u32();
  m.local_qpn = get_bits<uint32_t>(word, 24, 8);
  m.responder_resources = get_bits(word, 8, 0);
  word = r.u32();
  m.local_eecn = get_bits<uint32_t>(word, 24, 8);
  m.initiator_depth = get_bits(word, 8, 0);
  word = r.u32();
  m.remote_eecn = get_bits<uint32_t>(word, 24, 8);
  m.remote_cm_response_timeout = get_bits(word, 5, 3);
  m.transport_service_type = get_bits(word, 2, 1);
  m.end_to_end_flow_control = get_bits(word, 1, 0) != 0;
  word = r.u32();
  m.starting_psn = get_bits<uint32_t>(word, 24, 8);
  m.local_cm_response_timeout = get_bits(word, 5, 3);
  m.retry_count = get_bits(word, 3, 0);
  m.partition_key = r.u16();
  const uint8_t b50 = r.u8();
  m.path_mtu = get_bits(b50, 4, 4);
  m.rdc_exists = get_bits(b50, 1, 3) != 0;
  m.rnr_retry_count = get_bits(b50, 3, 0);
  const uint8_t b51 = r.u8();
  m.max_cm_retries = get_bits(b51, 4, 4);
  m.srq = get_bits(b51, 1, 3) != 0;
  m.extended_transport_type = get_bits(b51, 3, 0);
  const auto fixed = in.first<kSize>();
  m.primary_path = CmPath::unpack_req(fixed.subspan<kPrimaryPathOffset, CmPath::kSize>());
  m.alternate_path = CmPath::unpack_req(fixed.subspan<kAlternatePathOffset, CmPath::kSize>());
  m.sap_supported = get_bits(in[kPrivateDataOffset - 1], 1, 2) != 0;
  r.seek(kPrivateDataOffset);
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
