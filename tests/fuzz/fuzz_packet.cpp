// Fuzzes parse_packet() and parse_mad(): neither may crash or read outside
// its input, and whatever parses must re-pack into a packet that parses to
// the same headers and payload. Gid::parse() gets the same treatment on
// short inputs read as text.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "fabric/wire/crc.h"
#include "fabric/wire/gid.h"
#include "fabric/wire/mad_view.h"
#include "fabric/wire/packet_codec.h"
#include "fabric/wire/smp.h"

namespace {

using namespace ibfab::wire;

void require(bool cond) {
  if (!cond) __builtin_trap();
}

bool inside(std::span<const uint8_t> part, std::span<const uint8_t> whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void check_mad(std::span<const uint8_t> bytes) {
  const MadView m = parse_mad(bytes);
  if (!m.ok()) return;
  require(m.raw.size() == kMadSize && inside(m.raw, bytes) && inside(m.data, m.raw));
  // Re-pack the decoded headers: equal to the input but for reserved bytes.
  std::array<uint8_t, kMadSize> out = {};
  Writer w(out);
  m.header.pack(w);
  if (m.rmpp) m.rmpp->pack(w);
  if (m.sa) m.sa->pack(w);
  require(w.ok());
  for (std::size_t i = 0; i < w.pos(); ++i) {
    const bool reserved = i == 18 || i == 19 || i == 46 || i == 47;
    require(reserved || out[i] == m.raw[i]);
  }
  if (m.is_smp()) {
    const ConstSmpView v = m.smp();
    unsigned sum = v.hop_pointer() + v.hop_count() + v.status() + v.dr_slid() + v.dr_dlid();
    for (std::size_t i = 0; i < SmpLayout::kPathSize; ++i) sum += v.initial_path(i) + v.return_path(i);
    require(v.data().data() == m.raw.data() + SmpLayout::kDataOffset);
    // Patch a copy the way a switch does.
    std::array<uint8_t, kMadSize> copy;
    std::copy(m.raw.begin(), m.raw.end(), copy.begin());
    SmpView mv(copy);
    const uint8_t hp = static_cast<uint8_t>((mv.hop_pointer() + 1) % SmpLayout::kPathSize);
    mv.set_hop_pointer(hp);
    mv.set_return_path(hp, static_cast<uint8_t>(sum));
    mv.set_direction(!mv.direction());
    require(mv.return_path(hp) == static_cast<uint8_t>(sum) && mv.direction() != v.direction());
  }
}

void check_packet(std::span<const uint8_t> in) {
  const ParsedPacket checked = parse_packet(in);
  const ParsedPacket p = parse_packet(in, /*check_crcs=*/false);
  require(!checked.ok() || p.ok());
  if (!p.ok()) return;
  require(p.size == in.size() && inside(p.payload, in));
  require(p.payload_offset + p.payload.size() + p.bth.pad_count + kIcrcSize + kVcrcSize == in.size());

  if (p.payload.size() >= kMadSize && p.deth && p.bth.dest_qp <= 1) check_mad(p.payload);

  // Every opcode but RD's (PacketSpec has no RDETH) re-packs.
  if (p.layout.rdeth) return;
  PacketSpec spec;
  spec.lrh = p.lrh;
  spec.grh = p.grh;
  spec.bth = p.bth;
  spec.deth = p.deth;
  spec.xrc_srqn = p.xrc_srqn;
  spec.reth = p.reth;
  spec.atomic_eth = p.atomic_eth;
  spec.aeth = p.aeth;
  spec.atomic_ack_eth = p.atomic_ack_eth;
  spec.immediate = p.immediate;
  spec.invalidate_rkey = p.invalidate_rkey;
  spec.payload = p.payload;
  std::array<uint8_t, kMaxPacketSize> out;
  const std::size_t n = pack_packet(out, spec);
  require(n == in.size());
  const ParsedPacket q = parse_packet(std::span<const uint8_t>(out).first(n));
  require(q.ok());
  require(q.lrh == p.lrh && q.grh == p.grh && q.bth == p.bth && q.deth == p.deth &&
          q.xrc_srqn == p.xrc_srqn && q.reth == p.reth && q.atomic_eth == p.atomic_eth &&
          q.aeth == p.aeth && q.atomic_ack_eth == p.atomic_ack_eth && q.immediate == p.immediate &&
          q.invalidate_rkey == p.invalidate_rkey && q.payload_offset == p.payload_offset);
  require(std::equal(q.payload.begin(), q.payload.end(), p.payload.begin(), p.payload.end()));
  // Identical bytes carry identical CRCs.
  if (std::equal(in.begin(), in.end(), out.begin())) require(checked.ok());
}

void check_gid_text(std::span<const uint8_t> in) {
  if (in.size() > 48) return;
  const std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
  const auto g = Gid::parse(text);
  if (!g) return;
  char buf[Gid::kMaxTextLen + 1];
  const std::size_t len = g->format(buf);
  require(len <= Gid::kMaxTextLen && buf[len] == '\0');
  const auto again = Gid::parse(std::string_view(buf, len));
  require(again && *again == *g);
}

}  // namespace

// The sliced and folded CRC paths agree with one byte at a time.
static void check_crc_paths(std::span<const uint8_t> in) {
  uint32_t r32 = 0xffffffffu;
  uint16_t r16 = 0xffff;
  for (std::size_t i = 0; i < in.size(); ++i) {
    r32 = crc32_update(r32, in.subspan(i, 1));
    r16 = crc16_update(r16, in.subspan(i, 1));
  }
  require(crc32_update(0xffffffffu, in) == r32 && crc16_update(0xffff, in) == r16);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::span<const uint8_t> in(data, size);
  check_crc_paths(in);
  check_packet(in);
  check_mad(in);
  check_gid_text(in);
  return 0;
}
