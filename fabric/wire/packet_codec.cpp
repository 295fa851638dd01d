#include "fabric/wire/packet_codec.h"

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/crc.h"

namespace ibfab::wire {
namespace {

constexpr std::size_t kCrcBytes = kIcrcSize + kVcrcSize;

std::size_t pad_for(std::size_t payload_size) { return (4 - payload_size % 4) % 4; }

// True when `s` carries exactly the extension headers of `l` (never an RDETH,
// which PacketSpec cannot hold).
bool headers_match(const OpcodeLayout& l, const PacketSpec& s) {
  return !l.rdeth && l.deth == s.deth.has_value() && l.xrceth == s.xrc_srqn.has_value() &&
         l.reth == s.reth.has_value() && l.atomic_eth == s.atomic_eth.has_value() &&
         l.aeth == s.aeth.has_value() && l.atomic_ack_eth == s.atomic_ack_eth.has_value() &&
         l.immediate == s.immediate.has_value() && l.ieth == s.invalidate_rkey.has_value();
}

void pack_extension_headers(Writer& w, const PacketSpec& s) {
  if (s.deth) s.deth->pack(w);
  if (s.xrc_srqn) {
    w.u8(0);
    w.u24(*s.xrc_srqn & Bth::kMaxQpn);
  }
  if (s.reth) s.reth->pack(w);
  if (s.atomic_eth) s.atomic_eth->pack(w);
  if (s.aeth) s.aeth->pack(w);
  if (s.atomic_ack_eth) s.atomic_ack_eth->pack(w);
  if (s.immediate) w.u32(*s.immediate);
  if (s.invalidate_rkey) w.u32(*s.invalidate_rkey);
}

// Reads the extension headers of p.layout from `r`, positioned at the end of
// the BTH; the caller has checked that they fit.
void parse_extension_headers(Reader& r, ParsedPacket& p) {
  const OpcodeLayout& l = p.layout;
  if (l.rdeth) r.skip(4);
  if (l.deth) {
    p.deth_offset = r.pos();
    p.deth = Deth::unpack(r);
  }
  if (l.xrceth) {
    p.xrceth_offset = r.pos();
    p.xrc_srqn = r.u32() & Bth::kMaxQpn;
  }
  if (l.reth) {
    p.reth_offset = r.pos();
    p.reth = Reth::unpack(r);
  }
  if (l.atomic_eth) {
    p.atomic_eth_offset = r.pos();
    p.atomic_eth = AtomicEth::unpack(r);
  }
  if (l.aeth) {
    p.aeth_offset = r.pos();
    p.aeth = Aeth::unpack(r);
  }
  if (l.atomic_ack_eth) {
    p.atomic_ack_eth_offset = r.pos();
    p.atomic_ack_eth = AtomicAckEth::unpack(r);
  }
  if (l.immediate) {
    p.immediate_offset = r.pos();
    p.immediate = r.u32();
  }
  if (l.ieth) {
    p.ieth_offset = r.pos();
    p.invalidate_rkey = r.u32();
  }
}

}  // namespace

const char* to_string(PacketError e) {
  switch (e) {
    case PacketError::kNone: return "ok";
    case PacketError::kTooShort: return "packet too short";
    case PacketError::kBadLinkVersion: return "LRH LVer is not 0";
    case PacketError::kUnsupportedLnh: return "raw packet (LRH LNH 0 or 1) not supported";
    case PacketError::kBadPktLen: return "LRH PktLen disagrees with the packet length";
    case PacketError::kBadGrh: return "GRH IPVer, NxtHdr or PayLen invalid";
    case PacketError::kBadOpcode: return "reserved or unsupported BTH OpCode";
    case PacketError::kTruncatedHeaders: return "packet ends inside the OpCode's headers";
    case PacketError::kBadPadCount: return "BTH PadCnt exceeds the payload";
    case PacketError::kIcrcMismatch: return "ICRC mismatch";
    case PacketError::kVcrcMismatch: return "VCRC mismatch";
  }
  return "unknown packet error";
}

std::size_t pack_packet(std::span<uint8_t> out, const PacketSpec& spec) {
  const std::size_t size = pack_packet_unsealed(out, spec);
  if (size != 0) seal_crcs(out.first(size));
  return size;
}

namespace {

// Packs `spec` around a payload of `payload_size` bytes: copied from
// spec.payload when it holds them, else left for the caller at `payload`.
std::size_t pack_around(std::span<uint8_t> out, const PacketSpec& spec, std::size_t payload_size,
                        std::span<uint8_t>* payload) {
  const OpcodeLayout layout = opcode_layout(spec.bth.opcode);
  if (!layout.valid || !headers_match(layout, spec)) return 0;
  const std::size_t size = packet_size(spec.grh.has_value(), layout, payload_size);
  if (size > kMaxPacketSize || size > out.size()) return 0;

  const std::span<uint8_t> pkt = out.first(size);
  Writer w(pkt);
  Lrh lrh = spec.lrh;
  lrh.lnh = spec.grh ? Lrh::kLnhIbaGlobal : Lrh::kLnhIbaLocal;
  lrh.pkt_len = static_cast<uint16_t>((size - kVcrcSize) / 4);
  lrh.pack(w);
  if (spec.grh) {
    Grh grh = *spec.grh;
    grh.pay_len = static_cast<uint16_t>(size - Lrh::kSize - Grh::kSize - kVcrcSize);
    grh.pack(w);
  }
  Bth bth = spec.bth;
  const std::size_t pad = pad_for(payload_size);
  bth.pad_count = static_cast<uint8_t>(pad);
  bth.pack(w);
  pack_extension_headers(w, spec);
  if (payload != nullptr) {
    if (w.ok()) *payload = pkt.subspan(w.pos(), payload_size);
    w.seek(w.pos() + payload_size);
  } else if (payload_size != 0) {
    w.bytes(spec.payload.data(), payload_size);
  }
  w.zeros(pad + kCrcBytes);
  if (!w.ok() || w.pos() != size) return 0;
  return size;
}

}  // namespace

std::size_t pack_packet_unsealed(std::span<uint8_t> out, const PacketSpec& spec) {
  return pack_around(out, spec, spec.payload.size(), nullptr);
}

std::size_t pack_packet_in_place(std::span<uint8_t> out, const PacketSpec& spec, std::size_t payload_size,
                                 std::span<uint8_t>& payload) {
  if (!spec.payload.empty()) return 0;
  return pack_around(out, spec, payload_size, &payload);
}

ParsedPacket parse_packet(std::span<const uint8_t> wire, bool check_crcs) {
  ParsedPacket p;
  const std::size_t size = wire.size();
  if (size < kMinPacketSize) return p;

  Reader r(wire);
  p.lrh = *Lrh::unpack(r);  // size >= 8: cannot run out
  if (p.lrh.lver != Lrh::kLinkVersion) {
    p.error = PacketError::kBadLinkVersion;
    return p;
  }
  if (p.lrh.lnh != Lrh::kLnhIbaLocal && p.lrh.lnh != Lrh::kLnhIbaGlobal) {
    p.error = PacketError::kUnsupportedLnh;
    return p;
  }
  if (std::size_t{p.lrh.pkt_len} * 4 + kVcrcSize != size) {
    p.error = PacketError::kBadPktLen;
    return p;
  }
  p.size = size;
  const std::size_t crc_at = size - kCrcBytes;

  if (p.lrh.lnh == Lrh::kLnhIbaGlobal) {
    if (size < kMinPacketSize + Grh::kSize) {
      p.error = PacketError::kTooShort;
      return p;
    }
    p.grh_offset = r.pos();
    p.grh = Grh::unpack(r);
    if (!p.grh || p.grh->ip_ver != Grh::kIpVersion || p.grh->nxt_hdr != Grh::kNxtHdrIba ||
        std::size_t{p.grh->pay_len} != size - Lrh::kSize - Grh::kSize - kVcrcSize) {
      p.error = PacketError::kBadGrh;
      return p;
    }
  }

  p.bth_offset = r.pos();
  p.bth = *Bth::unpack(r);  // size checks above leave room for the BTH
  p.layout = opcode_layout(p.bth.opcode);
  if (!p.layout.valid) {
    p.error = PacketError::kBadOpcode;
    return p;
  }
  const std::size_t ext_at = p.bth_offset + Bth::kSize;
  const std::size_t hdr_end = ext_at + p.layout.ext_size();
  if (hdr_end > crc_at) {
    p.error = PacketError::kTruncatedHeaders;
    return p;
  }
  parse_extension_headers(r, p);
  p.payload_offset = hdr_end;
  const std::size_t avail = crc_at - hdr_end;
  if (p.bth.pad_count > avail) {
    p.error = PacketError::kBadPadCount;
    return p;
  }
  p.payload = wire.subspan(hdr_end, avail - p.bth.pad_count);
  p.icrc = load_icrc(wire.data() + crc_at);
  p.vcrc = load_vcrc(wire.data() + size - kVcrcSize);
  if (check_crcs) {
    if (p.vcrc != compute_vcrc(wire.first(size - kVcrcSize))) {
      p.error = PacketError::kVcrcMismatch;
      return p;
    }
    if (p.icrc != compute_icrc(wire.first(crc_at))) {
      p.error = PacketError::kIcrcMismatch;
      return p;
    }
  }
  p.error = PacketError::kNone;
  return p;
}

void set_vl(std::span<uint8_t> wire, uint8_t vl) {
  if (wire.size() < kMinPacketSize) return;
  wire[0] = static_cast<uint8_t>((vl & 0xf) << 4 | (wire[0] & 0xf));
  reseal_vcrc(wire);
}

}  // namespace ibfab::wire
