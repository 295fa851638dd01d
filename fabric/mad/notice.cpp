#include "fabric/mad/notice.h"

#include <algorithm>
#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

namespace {
constexpr std::size_t kDetailsGidOffset = 6;
}  // namespace

void Notice::set_details_gid(const Gid& gid) {
  std::fill_n(data_details.begin(), kDetailsGidOffset, uint8_t{0});
  std::copy(gid.begin(), gid.end(), data_details.begin() + kDetailsGidOffset);
}

Gid Notice::details_gid() const {
  Gid gid{};
  std::copy_n(data_details.begin() + kDetailsGidOffset, gid.size(), gid.begin());
  return gid;
}

void Notice::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u8(to_u8(put_bits(is_generic, 1, 7) | put_bits(type, 7, 0)));
  w.u24(producer_type & 0xFFFFFF);
  w.u16(trap_number);
  w.u16(issuer_lid);
  w.u16(static_cast<uint16_t>(put_bits(notice_toggle, 1, 15) | put_bits(notice_count, 15, 0)));
  w.bytes(data_details.data(), data_details.size());
  w.bytes(issuer_gid.data(), issuer_gid.size());
}

Notice Notice::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  Notice n;
  const uint8_t b = r.u8();
  n.is_generic = get_bits<bool>(b, 1, 7);
  n.type = get_bits(b, 7, 0);
  n.producer_type = r.u24();
  n.trap_number = r.u16();
  n.issuer_lid = r.u16();
  const uint16_t tc = r.u16();
  n.notice_toggle = get_bits<bool>(tc, 1, 15);
  n.notice_count = get_bits<uint16_t>(tc, 15, 0);
  r.bytes(n.data_details.data(), n.data_details.size());
  r.bytes(n.issuer_gid.data(), n.issuer_gid.size());
  return n;
}

}  // namespace ibfab::mad
