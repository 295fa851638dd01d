#include "fabric/model/mad_packet.h"

#include <algorithm>
#include <cstring>

#include "fabric/wire/bth.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/crc.h"
#include "fabric/wire/deth.h"
#include "fabric/wire/grh.h"
#include "fabric/wire/lrh.h"
#include "fabric/wire/mad_header.h"
#include "fabric/wire/packet_codec.h"

namespace ibfab::fabric {

using wire::load_be16;
using wire::load_be32;

std::optional<MadPacketLayout> locate_mad(std::span<const uint8_t> b) {
  if (b.size() < wire::kMinPacketSize) return std::nullopt;
  MadPacketLayout l;
  const uint8_t lnh = b[1] & 0x3;
  if (lnh == wire::Lrh::kLnhIbaGlobal) {
    l.global = true;
  } else if (lnh != wire::Lrh::kLnhIbaLocal) {
    return std::nullopt;
  }
  l.bth = wire::Lrh::kSize + (l.global ? wire::Grh::kSize : 0);
  l.deth = l.bth + wire::Bth::kSize;
  l.mad = l.deth + wire::Deth::kSize;
  if (b.size() < l.mad + wire::kMadSize + wire::kIcrcSize + wire::kVcrcSize) return std::nullopt;
  if (b[l.bth] != wire::opcode::kUdSendOnly) return std::nullopt;
  return l;
}

MadAddress mad_source(std::span<const uint8_t> b, const MadPacketLayout& l) {
  MadAddress a;
  a.lid = load_be16(&b[wire::Lrh::kSlidOffset]);
  a.sl = static_cast<uint8_t>(b[1] >> 4);
  a.qpn = load_be32(&b[l.deth + 4]) & 0xFFFFFF;
  a.qkey = load_be32(&b[l.deth]);
  a.has_grh = l.global;
  if (l.global) std::memcpy(a.gid.data(), &b[wire::Lrh::kSize + 8], 16);  // SGID
  return a;
}

PacketRef make_mad_packet(PacketPool& pool, const MadSend& s, std::span<const uint8_t> mad) {
  wire::PacketSpec spec;
  spec.lrh.vl = s.vl15 ? wire::Lrh::kVlManagement : 0;
  spec.lrh.sl = s.sl;
  spec.lrh.dlid = s.dlid;
  spec.lrh.slid = s.slid;
  if (s.grh && s.grh->has_grh) {
    wire::Grh g;
    g.hop_limit = 255;
    std::memcpy(g.sgid.raw.data(), s.sgid.data(), 16);
    std::memcpy(g.dgid.raw.data(), s.grh->gid.data(), 16);
    spec.grh = g;
  }
  spec.bth.opcode = wire::opcode::kUdSendOnly;
  spec.bth.pkey = s.pkey;
  spec.bth.dest_qp = s.dest_qp;
  spec.deth = wire::Deth{s.qkey, s.src_qp};
  spec.payload = mad.first(wire::kMadSize);
  const std::size_t size =
      wire::packet_size(spec.grh.has_value(), wire::opcode_layout(spec.bth.opcode), wire::kMadSize);
  PacketRef p = pool.make(static_cast<uint32_t>(size));
  const std::size_t n = wire::pack_packet_unsealed(p.mutable_bytes(), spec);
  p.resize(static_cast<uint32_t>(n));
  p.crcs_stale();  // computed if the packet is ever observed (PacketRef::seal)
  return p;
}

void reseal(PacketRef& pkt) { pkt.crcs_stale(); }

void turn_into_response(PacketRef& pkt, const MadPacketLayout& l, uint16_t own_lid,
                        uint32_t own_qp) {
  std::span<uint8_t> b = pkt.mutable_bytes();
  const uint16_t dlid = load_be16(&b[wire::Lrh::kDlidOffset]);
  const uint16_t slid = load_be16(&b[wire::Lrh::kSlidOffset]);
  const bool permissive = dlid == wire::Lrh::kPermissiveLid;
  wire::store_be16(&b[wire::Lrh::kDlidOffset], slid);
  wire::store_be16(&b[wire::Lrh::kSlidOffset],
                   permissive ? (own_lid ? own_lid : wire::Lrh::kPermissiveLid) : dlid);
  if (l.global) {
    uint8_t tmp[16];
    uint8_t* sgid = &b[wire::Lrh::kSize + 8];
    uint8_t* dgid = &b[wire::Lrh::kSize + 24];
    std::memcpy(tmp, sgid, 16);
    std::memcpy(sgid, dgid, 16);
    std::memcpy(dgid, tmp, 16);
  }
  const uint32_t requester_qp = load_be32(&b[l.deth + 4]) & 0xFFFFFF;
  // BTH DestQP (bytes 5..7 of the BTH) <- requester; DETH SrcQP <- us.
  b[l.bth + 5] = static_cast<uint8_t>(requester_qp >> 16);
  b[l.bth + 6] = static_cast<uint8_t>(requester_qp >> 8);
  b[l.bth + 7] = static_cast<uint8_t>(requester_qp);
  wire::store_be32(&b[l.deth], own_qp == 0 ? 0 : wire::Deth::kQp1QKey);
  wire::store_be32(&b[l.deth + 4], own_qp & 0xFFFFFF);
  reseal(pkt);
}

}  // namespace ibfab::fabric
