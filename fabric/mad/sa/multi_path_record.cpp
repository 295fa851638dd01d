#include "fabric/mad/sa/multi_path_record.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void MultiPathRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u32((raw_traffic ? 1u << 31 : 0u) | (flow_label & 0xFFFFF) << 8 | hop_limit);
  w.u8(tclass);
  w.u8(static_cast<uint8_t>((reversible ? 0x80 : 0) | (numb_path & 0x7F)));
  w.u16(p_key);
  w.u16(static_cast<uint16_t>((qos_class & 0xFFF) << 4 | (sl & 0xF)));
  w.u8(static_cast<uint8_t>((mtu_selector & 3) << 6 | (mtu & 0x3F)));
  w.u8(static_cast<uint8_t>((rate_selector & 3) << 6 | (rate & 0x3F)));
  w.u8(static_cast<uint8_t>((packet_life_time_selector & 3) << 6 | (packet_life_time & 0x3F)));
  w.u8(static_cast<uint8_t>(service_id >> 56));
  w.u8(static_cast<uint8_t>((independence_selector & 3) << 6 | (gid_scope & 0x3F)));
  w.u8(sgid_count);
  w.u8(dgid_count);
  for (int shift = 48; shift >= 0; shift -= 8) w.u8(static_cast<uint8_t>(service_id >> shift));
  for (const wire::Gid& g : gids) w.bytes(g.raw.data(), g.raw.size());
}

MultiPathRecord MultiPathRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  MultiPathRecord m;
  const uint32_t w0 = r.u32();
  m.raw_traffic = (w0 >> 31) != 0;
  m.flow_label = (w0 >> 8) & 0xFFFFF;
  m.hop_limit = static_cast<uint8_t>(w0);
  m.tclass = r.u8();
  const uint8_t np = r.u8();
  m.reversible = (np & 0x80) != 0;
  m.numb_path = np & 0x7F;
  m.p_key = r.u16();
  const uint16_t qs = r.u16();
  m.qos_class = qs >> 4;
  m.sl = qs & 0xF;
  const uint8_t mtu = r.u8(), rate = r.u8(), plt = r.u8();
  m.mtu_selector = mtu >> 6;
  m.mtu = mtu & 0x3F;
  m.rate_selector = rate >> 6;
  m.rate = rate & 0x3F;
  m.packet_life_time_selector = plt >> 6;
  m.packet_life_time = plt & 0x3F;
  m.service_id = uint64_t{r.u8()} << 56;
  const uint8_t ind = r.u8();
  m.independence_selector = ind >> 6;
  m.gid_scope = ind & 0x3F;
  m.sgid_count = r.u8();
  m.dgid_count = r.u8();
  for (int shift = 48; shift >= 0; shift -= 8) m.service_id |= uint64_t{r.u8()} << shift;
  for (wire::Gid& g : m.gids) r.bytes(g.raw.data(), g.raw.size());
  return m;
}

}  // namespace ibfab::mad
