#include "api/server/rmpp_receiver.h"

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/rmpp_header.h"

namespace ibfab::api {

namespace {
using wire::RmppHeader;
constexpr std::size_t kMad = 256;
constexpr uint32_t kRmppData = 220;  // bytes after the RMPP header
}  // namespace

std::size_t RmppReceiver::data_offset(uint8_t mgmt_class) {
  if (mgmt_class == 0x03) return 56;
  if (mgmt_class >= 0x30 && mgmt_class <= 0x4f) return 40;
  return 36;
}

RmppReceiver::Outcome RmppReceiver::receive(uint16_t from_lid, std::span<const uint8_t> mad, std::vector<uint8_t>& ack,
                                            std::vector<uint8_t>& whole) {
  if (mad.size() < kMad || mad[RmppHeader::kOffset + 1] != RmppHeader::kTypeData ||
      !(mad[RmppHeader::kOffset + 2] & RmppHeader::kFlagActive))
    return Outcome::NotRmpp;
  const uint8_t flags = mad[RmppHeader::kOffset + 2] & 0x7;
  const uint32_t seg = wire::load_be32(&mad[RmppHeader::kOffset + 4]);
  const uint32_t paylen = wire::load_be32(&mad[RmppHeader::kOffset + 8]);
  const std::size_t offset = data_offset(mad[1]);
  const auto key = std::make_pair(from_lid, wire::load_be64(&mad[8]));
  if (flags & RmppHeader::kFlagFirst) transfers_[key] = Transfer{};
  auto it = transfers_.find(key);
  uint32_t acked = 0;
  bool done = false;
  if (it != transfers_.end() && seg == it->second.last + 1) {
    Transfer& t = it->second;
    if (seg == 1) t.message.assign(mad.begin(), mad.begin() + static_cast<std::ptrdiff_t>(offset));
    t.message.insert(t.message.end(), mad.begin() + static_cast<std::ptrdiff_t>(offset), mad.end());
    t.last = seg;
    acked = seg;
    if (flags & RmppHeader::kFlagLast) {
      const std::size_t pad = paylen <= kRmppData ? kRmppData - paylen : 0;
      if (pad < t.message.size() - offset) t.message.resize(t.message.size() - pad);
      whole = std::move(t.message);
      transfers_.erase(it);
      done = true;
    }
  } else {
    acked = it != transfers_.end() ? it->second.last : 0;  // out of order: ACK what we have
    if (it == transfers_.end() && !(flags & RmppHeader::kFlagFirst)) acked = seg;  // a resent last segment
  }
  ack.assign(kMad, 0);
  std::copy(mad.begin(), mad.begin() + static_cast<std::ptrdiff_t>(offset), ack.begin());
  ack[3] ^= 0x80;
  ack[RmppHeader::kOffset + 1] = RmppHeader::kTypeAck;
  ack[RmppHeader::kOffset + 2] = RmppHeader::kFlagActive;
  ack[RmppHeader::kOffset + 3] = 0;
  wire::store_be32(&ack[RmppHeader::kOffset + 4], acked);
  wire::store_be32(&ack[RmppHeader::kOffset + 8], acked + kWindow);
  return done ? Outcome::Done : Outcome::Pending;
}

}  // namespace ibfab::api
