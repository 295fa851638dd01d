#pragma once
// The receiving side of RMPP (IBTA 1.3 vol 1, 13.6) for one MAD agent, as
// the Linux MAD layer does it (mad_rmpp.c) for agents registered with an
// RMPP version: DATA segments are acknowledged and coalesced into one
// message, which the agent's reader gets whole:
//   - the first segment's header (MAD + RMPP + class header: 56 bytes for
//     the SA, 40 for vendor classes 0x30-0x4f, 36 otherwise), then every
//     segment's data in order; length = header + segments x data - pad,
//     pad = 220 - the last segment's PayloadLength;
//   - every segment is ACKed: the segment's header with the method's
//     response bit flipped (a GetTableResp is ACKed as 0x12), RMPPType ACK,
//     SegmentNumber = the last segment received in order, NewWindowLast =
//     that + kWindow; a segment out of order is dropped and the last one
//     ACKed again.
// Transfers are keyed by (sender LID, TID).
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace ibfab::api {

class RmppReceiver {
 public:
  static constexpr uint32_t kWindow = 64;

  enum class Outcome {
    NotRmpp,  // not an active RMPP DATA segment: deliver the MAD as it is
    Pending,  // consumed; send `ack`
    Done,     // consumed; send `ack` and deliver `whole`
  };
  Outcome receive(uint16_t from_lid, std::span<const uint8_t> mad, std::vector<uint8_t>& ack,
                  std::vector<uint8_t>& whole);

  // Bytes before the data in each segment of class `mgmt_class`.
  static std::size_t data_offset(uint8_t mgmt_class);

  std::size_t in_progress() const { return transfers_.size(); }

 private:
  struct Transfer {
    uint32_t last = 0;  // last segment received in order
    std::vector<uint8_t> message;
  };
  std::map<std::pair<uint16_t, uint64_t>, Transfer> transfers_;
};

}  // namespace ibfab::api
