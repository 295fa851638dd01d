#pragma once
// REP, the reply to a REQ (IBTA 1.3 vol 1, 12.6; AttributeID 0x0013): the
// passive side's QP and private data. Byte offsets within the 232-byte
// message (bits numbered 7..0, 7 most significant):
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 LocalQ_Key(32)
//  12 LocalQPN(24) | VendorID 23:16
//  16 LocalEEContextNumber(24) | VendorID 15:8
//  20 StartingPSN(24) | VendorID 7:0
//  24 ResponderResources(8)   25 InitiatorDepth(8)
//  26 TargetACKDelay 7:3 | FailoverAccepted 2:1 | EndToEndFlowControl 0
//  27 RNRRetryCount 7:5 | SRQ 4 | reserved 3:0
//  28 LocalCAGUID(64)
//  36 PrivateData(196 bytes)
// VendorID (IBTA 1.4, what Linux's ECE sends) is split as Linux's
// ibta_vol1_c12.h places it. Reserved bits are written as zero and ignored
// on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"

namespace ibfab::mad {

// REP:FailoverAccepted (2 bits).
namespace cm_failover {
inline constexpr uint8_t kAccepted = 0;
inline constexpr uint8_t kUnsupported = 1;
inline constexpr uint8_t kRejected = 2;
}  // namespace cm_failover

struct CmRep {
  static constexpr uint16_t kAttributeId = cm_attr::kRep;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kPrivateDataOffset = 36;
  static constexpr std::size_t kPrivateDataSize = 196;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  uint32_t local_qkey = 0;
  uint32_t local_qpn = 0;            // 24 bits
  uint32_t vendor_id = 0;            // 24 bits
  uint32_t local_eecn = 0;           // 24 bits
  uint32_t starting_psn = 0;         // 24 bits
  uint8_t responder_resources = 0;
  uint8_t initiator_depth = 0;
  uint8_t target_ack_delay = 0;      // 5 bits
  uint8_t failover_accepted = 0;     // 2 bits, cm_failover::
  bool end_to_end_flow_control = false;
  uint8_t rnr_retry_count = 0;       // 3 bits
  bool srq = false;
  uint64_t local_ca_guid = 0;
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes; each field is masked to its width.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmRep> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmRep&, const CmRep&) = default;
};

}  // namespace ibfab::mad
