#pragma once
// ACK Extended Transport Header (IBTA Vol 1, 9.3): 4 bytes after the BTH of
// RC/XRC Acknowledge, ATOMIC Acknowledge and RDMA READ Response First, Last
// and Only packets.
//
//   byte 0   Syndrome: reserved(7)  kind(6:5)  value(4:0)
//   1..3     MSN (Message Sequence Number)
//
// The syndrome's kind is ACK (00), RNR NAK (01) or NAK (11); 10 is reserved.
// Its value is, by kind: the end-to-end credit count code (0x1f: invalid,
// i.e. no credit information), the RNR NAK timer code (rnr_timer_ns), or the
// NAK code (NakCode). The reserved bit is packed as zero and ignored when
// unpacked.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

// Syndrome bits 6:5. The reserved value 2 matches none of these.
enum class AckKind : uint8_t { kAck = 0, kRnrNak = 1, kNak = 3 };

// Syndrome bits 4:0 of a NAK; 5..31 are reserved.
enum class NakCode : uint8_t {
  kPsnSequenceError = 0,
  kInvalidRequest = 1,
  kRemoteAccessError = 2,
  kRemoteOperationalError = 3,
  kInvalidRdRequest = 4,
};

struct Aeth {
  static constexpr std::size_t kSize = 4;
  static constexpr uint8_t kInvalidCredits = 0x1f;
  static constexpr uint32_t kMaxMsn = 0xffffff;

  uint8_t syndrome = 0;  // 7 bits used
  uint32_t msn = 0;      // 24 bits

  AckKind kind() const { return static_cast<AckKind>(syndrome >> 5 & 0x3); }
  uint8_t value() const { return syndrome & 0x1f; }

  static Aeth ack(uint32_t msn, uint8_t credits = kInvalidCredits) {
    return make(AckKind::kAck, credits, msn);
  }
  static Aeth rnr_nak(uint32_t msn, uint8_t timer_code) {
    return make(AckKind::kRnrNak, timer_code, msn);
  }
  static Aeth nak(uint32_t msn, NakCode code) {
    return make(AckKind::kNak, static_cast<uint8_t>(code), msn);
  }

  void pack(Writer& w) const;
  static std::optional<Aeth> unpack(Reader& r);

  friend bool operator==(const Aeth&, const Aeth&) = default;

 private:
  static Aeth make(AckKind kind, uint8_t value, uint32_t msn) {
    return Aeth{static_cast<uint8_t>(static_cast<uint8_t>(kind) << 5 | (value & 0x1f)),
                msn & kMaxMsn};
  }
};

// The RNR NAK timer: the minimum time, in nanoseconds, the requester waits
// before retrying after an RNR NAK carrying `code` (only bits 4:0 are used).
// Code 0 is the longest, 655.36 ms; codes 1..31 run from 0.01 ms to 491.52 ms.
uint64_t rnr_timer_ns(uint8_t code);

}  // namespace ibfab::wire
