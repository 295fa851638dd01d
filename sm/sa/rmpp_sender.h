#pragma once
// The sending side of RMPP (IBTA 1.3 vol 1, 13.6) for SA GetTable
// responses, as the Linux MAD layer does it (mad_rmpp.c) for an SA that
// does not sit on a kernel:
// - every segment repeats the 56-byte MAD + RMPP + SA header and carries
//   200 bytes of the payload; records may straddle segments;
// - PayloadLength: n * 220 - pad in the first segment, 220 - pad in the
//   last, 0 in between (220 = SA header + 200 data bytes; pad = the unused
//   bytes of the last segment);
// - the window starts at 1: segment 1 goes out, then, on each ACK (the
//   last segment received in order, and NewWindowLast), every segment up
//   to NewWindowLast; a transfer is done when the last segment is ACKed
//   (a single-segment response too);
// - no ACK within `timeout`: the unacknowledged window is sent again, at
//   most `retries` times, then the transfer is dropped; STOP or ABORT from
//   the receiver drops it at once.
// Transfers are keyed by (receiver LID, TID): the receiver's ACKs carry
// the TID of the response.
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "fabric/model/mad_agent.h"
#include "sim/simulator.h"

namespace ibfab::sm {

class RmppSender {
 public:
  using Send = std::function<void(const fabric::MadAddress& to, std::span<const uint8_t> mad)>;
  struct Options {
    sim::Time timeout = sim::Time::s(2);
    uint32_t retries = 3;
  };
  struct Stats {
    uint64_t transfers = 0, completed = 0, dropped = 0;
    uint64_t segments_sent = 0, resent = 0, acks = 0;
  };
  static constexpr std::size_t kHeaderSize = 56;
  static constexpr std::size_t kSegmentData = 200;
  static constexpr uint32_t kSegmentPayload = 220;
  static constexpr uint8_t kNoRespTime = 0x1F;

  // `sim` must outlive this object; pending timers are cancelled by the
  // destructor.
  RmppSender(sim::Simulator& sim, Send send, Options options);
  ~RmppSender();
  RmppSender(const RmppSender&) = delete;
  RmppSender& operator=(const RmppSender&) = delete;

  // Starts sending `payload` behind a copy of the first 56 bytes of
  // `header` (method, status, TID, attribute, SA header already filled;
  // the RMPP header is written per segment). Replaces any transfer to the
  // same (LID, TID).
  void start(const fabric::MadAddress& to, std::span<const uint8_t> header,
             std::vector<uint8_t> payload);
  // An RMPP MAD (ACK, STOP or ABORT) from `lid`. Returns false if it
  // belongs to no transfer.
  bool on_rmpp(uint16_t lid, std::span<const uint8_t> mad);

  std::size_t active() const { return transfers_.size(); }
  const Stats& stats() const { return stats_; }
  // Segments a payload of `bytes` takes (at least 1).
  static uint32_t segments_for(std::size_t bytes);

 private:
  struct Transfer {
    fabric::MadAddress to;
    std::vector<uint8_t> header;
    std::vector<uint8_t> payload;
    uint32_t segments = 1;
    uint32_t acked = 0;        // last segment ACKed
    uint32_t window_last = 1;  // highest segment the receiver accepts
    uint32_t sent = 0;         // highest segment sent
    uint32_t tries = 0;        // timeouts so far
    sim::EventHandle timer;
  };
  using Key = std::pair<uint16_t, uint64_t>;  // receiver LID, TID
  void send_segment(const Transfer& t, uint32_t seg);
  void send_window(Transfer& t, uint32_t from);
  void arm(const Key& key, Transfer& t);
  void timed_out(uint16_t lid, uint64_t tid);

  sim::Simulator* sim_;
  Send send_;
  Options options_;
  std::map<Key, Transfer> transfers_;
  Stats stats_;
};

}  // namespace ibfab::sm
