#include "fabric/mad/cm_path.h"

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {
namespace {

// Bytes 0-35, the same in both layouts.
void pack_ends(const CmPath& p, wire::Writer& w) {
  w.u16(p.local_lid);
  w.u16(p.remote_lid);
  w.bytes(p.local_gid.data(), p.local_gid.size());
  w.bytes(p.remote_gid.data(), p.remote_gid.size());
}

CmPath unpack_ends(wire::Reader& r) {
  CmPath p;
  p.local_lid = r.u16();
  p.remote_lid = r.u16();
  r.bytes(p.local_gid.data(), p.local_gid.size());
  r.bytes(p.remote_gid.data(), p.remote_gid.size());
  return p;
}

// Bytes 42-43, the same in both layouts.
void pack_sl_and_timeout(const CmPath& p, wire::Writer& w) {
  w.u8(to_u8(put_bits(p.sl, 4, 4) | put_bits(p.subnet_local, 1, 3)));
  w.u8(to_u8(put_bits(p.local_ack_timeout, 5, 3)));
}

void unpack_sl_and_timeout(wire::Reader& r, CmPath& p) {
  const uint8_t b42 = r.u8();
  p.sl = get_bits(b42, 4, 4);
  p.subnet_local = get_bits(b42, 1, 3) != 0;
  p.local_ack_timeout = get_bits(r.u8(), 5, 3);
}

}  // namespace

void CmPath::pack_req(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  pack_ends(*this, w);
  w.u32(put_bits(flow_label, 20, 12) | put_bits(packet_rate, 6, 0));
  w.u8(traffic_class);
  w.u8(hop_limit);
  pack_sl_and_timeout(*this, w);
}

CmPath CmPath::unpack_req(std::span<const uint8_t, kSize> in) {
  wire::Reader r(in);
  CmPath p = unpack_ends(r);
  const uint32_t word = r.u32();
  p.flow_label = get_bits<uint32_t>(word, 20, 12);
  p.packet_rate = get_bits(word, 6, 0);
  p.traffic_class = r.u8();
  p.hop_limit = r.u8();
  unpack_sl_and_timeout(r, p);
  return p;
}

void CmPath::pack_lap(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  pack_ends(*this, w);
  w.u32(put_bits(flow_label, 20, 12) | put_bits(traffic_class, 8, 0));
  w.u8(hop_limit);
  w.u8(to_u8(put_bits(packet_rate, 6, 0)));
  pack_sl_and_timeout(*this, w);
}

CmPath CmPath::unpack_lap(std::span<const uint8_t, kSize> in) {
  wire::Reader r(in);
  CmPath p = unpack_ends(r);
  const uint32_t word = r.u32();
  p.flow_label = get_bits<uint32_t>(word, 20, 12);
  p.traffic_class = get_bits(word, 8, 0);
  p.hop_limit = r.u8();
  p.packet_rate = get_bits(r.u8(), 6, 0);
  unpack_sl_and_timeout(r, p);
  return p;
}

}  // namespace ibfab::mad
