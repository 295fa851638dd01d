#include "sm/sa/rmpp_sender.h"

#include <algorithm>
#include <cstring>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"
#include "fabric/wire/rmpp_header.h"

namespace ibfab::sm {

using wire::RmppHeader;

RmppSender::RmppSender(sim::Simulator& sim, Send send, Options options)
    : sim_(&sim), send_(std::move(send)), options_(options) {}

RmppSender::~RmppSender() {
  for (auto& [key, t] : transfers_) sim_->cancel(t.timer);
}

uint32_t RmppSender::segments_for(std::size_t bytes) {
  return std::max<uint32_t>(1, static_cast<uint32_t>((bytes + kSegmentData - 1) / kSegmentData));
}

void RmppSender::send_segment(const Transfer& t, uint32_t seg) {
  uint8_t mad[wire::kMadSize] = {};
  std::memcpy(mad, t.header.data(), kHeaderSize);
  const std::size_t off = std::size_t{seg - 1} * kSegmentData;
  if (off < t.payload.size()) {
    const std::size_t n = std::min(kSegmentData, t.payload.size() - off);
    std::memcpy(mad + kHeaderSize, t.payload.data() + off, n);
  }
  const uint32_t pad =
      static_cast<uint32_t>(std::size_t{t.segments} * kSegmentData - t.payload.size());
  uint8_t flags = RmppHeader::kFlagActive;
  if (seg == 1) flags |= RmppHeader::kFlagFirst;
  if (seg == t.segments) flags |= RmppHeader::kFlagLast;
  uint32_t length = 0;
  if (seg == 1) length = t.segments * kSegmentPayload - pad;
  else if (seg == t.segments) length = kSegmentPayload - pad;
  mad[RmppHeader::kOffset] = RmppHeader::kVersion;
  mad[RmppHeader::kOffset + 1] = RmppHeader::kTypeData;
  mad[RmppHeader::kOffset + 2] = static_cast<uint8_t>(kNoRespTime << 3 | flags);
  mad[RmppHeader::kOffset + 3] = 0;
  wire::store_be32(&mad[RmppHeader::kOffset + 4], seg);
  wire::store_be32(&mad[RmppHeader::kOffset + 8], length);
  ++stats_.segments_sent;
  send_(t.to, std::span<const uint8_t>(mad, wire::kMadSize));
}

void RmppSender::send_window(Transfer& t, uint32_t from) {
  const uint32_t last = std::min(t.window_last, t.segments);
  for (uint32_t s = from; s <= last; ++s) send_segment(t, s);
  t.sent = std::max(t.sent, last);
}

void RmppSender::arm(const Key& key, Transfer& t) {
  sim_->cancel(t.timer);
  const uint16_t lid = key.first;
  const uint64_t tid = key.second;
  t.timer = sim_->schedule(options_.timeout, [this, lid, tid] { timed_out(lid, tid); });
}

void RmppSender::start(const fabric::MadAddress& to, std::span<const uint8_t> header,
                       std::vector<uint8_t> payload) {
  const Key key{to.lid, wire::load_be64(&header[8])};
  if (auto old = transfers_.find(key); old != transfers_.end()) {
    sim_->cancel(old->second.timer);
    transfers_.erase(old);
    ++stats_.dropped;
  }
  Transfer t;
  t.to = to;
  t.header.assign(header.begin(), header.begin() + kHeaderSize);
  t.segments = segments_for(payload.size());
  t.payload = std::move(payload);
  ++stats_.transfers;
  Transfer& stored = transfers_.emplace(key, std::move(t)).first->second;
  send_window(stored, 1);
  arm(key, stored);
}

bool RmppSender::on_rmpp(uint16_t lid, std::span<const uint8_t> mad) {
  if (mad.size() < wire::kMadSize) return false;
  const Key key{lid, wire::load_be64(&mad[8])};
  auto it = transfers_.find(key);
  if (it == transfers_.end()) return false;
  Transfer& t = it->second;
  const uint8_t type = mad[RmppHeader::kOffset + 1];
  if (type == RmppHeader::kTypeStop || type == RmppHeader::kTypeAbort) {
    sim_->cancel(t.timer);
    transfers_.erase(it);
    ++stats_.dropped;
    return true;
  }
  if (type != RmppHeader::kTypeAck) return true;
  ++stats_.acks;
  const uint32_t seg = wire::load_be32(&mad[RmppHeader::kOffset + 4]);
  const uint32_t nwl = wire::load_be32(&mad[RmppHeader::kOffset + 8]);
  if (seg > t.sent || seg < t.acked) return true;  // not for a segment sent, or stale
  if (seg == t.segments) {
    sim_->cancel(t.timer);
    transfers_.erase(it);
    ++stats_.completed;
    return true;
  }
  t.acked = seg;
  t.tries = 0;
  t.window_last = std::max(t.window_last, std::min(std::max(nwl, seg + 1), t.segments));
  send_window(t, t.sent + 1);
  arm(key, t);
  return true;
}

void RmppSender::timed_out(uint16_t lid, uint64_t tid) {
  auto it = transfers_.find(Key{lid, tid});
  if (it == transfers_.end()) return;
  Transfer& t = it->second;
  if (++t.tries > options_.retries) {
    transfers_.erase(it);
    ++stats_.dropped;
    return;
  }
  const uint64_t before = stats_.segments_sent;
  const uint32_t last = std::min(t.window_last, t.segments);
  for (uint32_t s = t.acked + 1; s <= last; ++s) send_segment(t, s);
  stats_.resent += stats_.segments_sent - before;
  arm(it->first, t);
}

}  // namespace ibfab::sm
