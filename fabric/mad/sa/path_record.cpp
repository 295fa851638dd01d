#include "fabric/mad/sa/path_record.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void PathRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u64(service_id);
  w.bytes(dgid.raw.data(), dgid.raw.size());
  w.bytes(sgid.raw.data(), sgid.raw.size());
  w.u16(dlid);
  w.u16(slid);
  w.u32(put_bits(raw_traffic, 1, 31) | put_bits(flow_label, 20, 8) | put_bits(hop_limit, 8, 0));
  w.u8(tclass);
  w.u8(to_u8(put_bits(reversible, 1, 7) | put_bits(numb_path, 7, 0)));
  w.u16(p_key);
  w.u16(static_cast<uint16_t>(put_bits(qos_class, 12, 4) | put_bits(sl, 4, 0)));
  w.u8(to_u8(put_bits(mtu_selector, 2, 6) | put_bits(mtu, 6, 0)));
  w.u8(to_u8(put_bits(rate_selector, 2, 6) | put_bits(rate, 6, 0)));
  w.u8(to_u8(put_bits(packet_life_time_selector, 2, 6) | put_bits(packet_life_time, 6, 0)));
  w.u8(preference);
  w.zeros(6);
}

PathRecord PathRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PathRecord p;
  p.service_id = r.u64();
  r.bytes(p.dgid.raw.data(), p.dgid.raw.size());
  r.bytes(p.sgid.raw.data(), p.sgid.raw.size());
  p.dlid = r.u16();
  p.slid = r.u16();
  const uint32_t word = r.u32();
  p.raw_traffic = get_bits<bool>(word, 1, 31);
  p.flow_label = get_bits<uint32_t>(word, 20, 8);
  p.hop_limit = get_bits(word, 8, 0);
  p.tclass = r.u8();
  uint8_t b = r.u8();
  p.reversible = get_bits<bool>(b, 1, 7);
  p.numb_path = get_bits(b, 7, 0);
  p.p_key = r.u16();
  const uint16_t qos_sl = r.u16();
  p.qos_class = get_bits<uint16_t>(qos_sl, 12, 4);
  p.sl = get_bits(qos_sl, 4, 0);
  b = r.u8();
  p.mtu_selector = get_bits(b, 2, 6);
  p.mtu = get_bits(b, 6, 0);
  b = r.u8();
  p.rate_selector = get_bits(b, 2, 6);
  p.rate = get_bits(b, 6, 0);
  b = r.u8();
  p.packet_life_time_selector = get_bits(b, 2, 6);
  p.packet_life_time = get_bits(b, 6, 0);
  p.preference = r.u8();
  return p;
}

}  // namespace ibfab::mad
