#include "fabric/mad/cm_rep.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void CmRep::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.u32(local_qkey);
  w.u32(put_bits(local_qpn, 24, 8) | put_bits(vendor_id >> 16, 8, 0));
  w.u32(put_bits(local_eecn, 24, 8) | put_bits(vendor_id >> 8, 8, 0));
  w.u32(put_bits(starting_psn, 24, 8) | put_bits(vendor_id, 8, 0));
  w.u8(responder_resources);
  w.u8(initiator_depth);
  w.u8(to_u8(put_bits(target_ack_delay, 5, 3) | put_bits(failover_accepted, 2, 1) |
             put_bits(end_to_end_flow_control, 1, 0)));
  w.u8(to_u8(put_bits(rnr_retry_count, 3, 5) | put_bits(srq, 1, 4)));
  w.u64(local_ca_guid);
  w.bytes(private_data.data(), private_data.size());
}

std::optional<CmRep> CmRep::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmRep m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  m.local_qkey = r.u32();
  uint32_t word = r.u32();
  m.local_qpn = get_bits<uint32_t>(word, 24, 8);
  m.vendor_id = get_bits<uint32_t>(word, 8, 0) << 16;
  word = r.u32();
  m.local_eecn = get_bits<uint32_t>(word, 24, 8);
  m.vendor_id |= get_bits<uint32_t>(word, 8, 0) << 8;
  word = r.u32();
  m.starting_psn = get_bits<uint32_t>(word, 24, 8);
  m.vendor_id |= get_bits<uint32_t>(word, 8, 0);
  m.responder_resources = r.u8();
  m.initiator_depth = r.u8();
  const uint8_t b26 = r.u8();
  m.target_ack_delay = get_bits(b26, 5, 3);
  m.failover_accepted = get_bits(b26, 2, 1);
  m.end_to_end_flow_control = get_bits(b26, 1, 0) != 0;
  const uint8_t b27 = r.u8();
  m.rnr_retry_count = get_bits(b27, 3, 5);
  m.srq = get_bits(b27, 1, 4) != 0;
  m.local_ca_guid = r.u64();
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

}  // namespace ibfab::mad
