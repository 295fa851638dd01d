#pragma once
// Test helper: an SA requester on a host of a fabric whose SM is up, that
// sends one Get or GetTable and returns the answer: status and the records
// (a GetTable's RMPP segments acknowledged one by one and reassembled).
#include <cstdint>
#include <optional>
#include <vector>

#include "fabric/mad/sa/sa_mad.h"
#include "fabric/wire/rmpp_header.h"
#include "tests/sm/sa_client.h"

namespace ibfab::sm::testing {

struct SaAnswer {
  uint16_t status = 0;
  uint8_t method = 0;
  uint16_t attr_offset = 0;
  std::vector<uint8_t> payload;  // the records, back to back
  std::size_t count() const { return mad::sa_records_in(payload, attr_offset); }
  template <class R>
  R record(std::size_t i) const { return R::unpack(mad::sa_record(payload, attr_offset, i)); }
};

// Sends `q` from `c` and collects the answer; nullopt if none came.
inline std::optional<SaAnswer> ask(SaClient& c, const Mad& q) {
  using wire::RmppHeader;
  const std::size_t first = c.received.size();
  if (!c.send(q) || !c.wait_for(first + 1)) return std::nullopt;
  SaAnswer a;
  const mad::ConstSaBuffer m0(c.received[first].data(), 256);
  a.status = mad::sa_status(m0);
  a.method = mad::sa_method(m0);
  a.attr_offset = mad::sa_attribute_offset(m0);
  const bool rmpp = (c.received[first][RmppHeader::kOffset + 2] & RmppHeader::kFlagActive) != 0;
  if (!rmpp) {
    const auto d = mad::sa_data(m0);
    a.payload.assign(d.begin(), d.end());
    return a;
  }
  // The first segment's PayloadLength counts every segment's SA header
  // (20 bytes) and data; the last segment's data ends at that total.
  const uint32_t payload_len = wire::load_be32(&c.received[first][RmppHeader::kOffset + 8]);
  std::size_t segments = 0;
  for (std::size_t i = first;; ++i, ++segments) {
    if (c.received.size() <= i && !c.wait_for(i + 1)) return std::nullopt;
    const Mad& m = c.received[i];
    a.payload.insert(a.payload.end(), m.begin() + mad::kSaDataOffset, m.end());
    Mad ack = q;
    ack[RmppHeader::kOffset] = 1;
    ack[RmppHeader::kOffset + 1] = RmppHeader::kTypeAck;
    ack[RmppHeader::kOffset + 2] = RmppHeader::kFlagActive;
    const uint32_t seg = wire::load_be32(&m[RmppHeader::kOffset + 4]);
    wire::store_be32(&ack[RmppHeader::kOffset + 4], seg);
    wire::store_be32(&ack[RmppHeader::kOffset + 8], seg + 1);
    c.send(ack);
    if (m[RmppHeader::kOffset + 2] & RmppHeader::kFlagLast) break;
  }
  const std::size_t data = payload_len - 20 * (segments + 1);
  if (data <= a.payload.size()) a.payload.resize(data);
  return a;
}

}  // namespace ibfab::sm::testing
