#pragma once
// REJ, reject (IBTA 1.3 vol 1, 12.6; AttributeID 0x0012): refuses a REQ, a
// REP, or (as the answer to any message for an unknown connection) another
// message. Byte offsets within the 232-byte message (bits numbered 7..0, 7
// most significant):
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 MessageREJected 7:6 | reserved 5:0
//   9 RejectInfoLength 7:1 | reserved 0
//  10 Reason(16)
//  12 AdditionalRejectInformation(72 bytes)   84 PrivateData(148 bytes)
// Reserved bits are written as zero and ignored on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"

namespace ibfab::mad {

// REJ:MessageREJected (2 bits).
namespace cm_rej_msg {
inline constexpr uint8_t kReq = 0;
inline constexpr uint8_t kRep = 1;
inline constexpr uint8_t kOther = 2;
}  // namespace cm_rej_msg

// REJ:Reason (IBTA 1.3 vol 1, 12.6, "REJ Reason codes"; Linux's enum
// ib_cm_rej_reason has the same values). 34 is not assigned.
enum class CmRejReason : uint16_t {
  kNoQp = 1,
  kNoEec = 2,
  kNoResources = 3,
  kTimeout = 4,
  kUnsupportedRequest = 5,
  kInvalidCommId = 6,
  kInvalidCommInstance = 7,
  kInvalidServiceId = 8,
  kInvalidTransportType = 9,
  kStaleConnection = 10,
  kRdcNotExist = 11,
  kInvalidGid = 12,
  kInvalidLid = 13,
  kInvalidSl = 14,
  kInvalidTrafficClass = 15,
  kInvalidHopLimit = 16,
  kInvalidPacketRate = 17,
  kInvalidAltGid = 18,
  kInvalidAltLid = 19,
  kInvalidAltSl = 20,
  kInvalidAltTrafficClass = 21,
  kInvalidAltHopLimit = 22,
  kInvalidAltPacketRate = 23,
  kPortCmRedirect = 24,
  kPortRedirect = 25,
  kInvalidPathMtu = 26,
  kInsufficientResponderResources = 27,
  kConsumerReject = 28,
  kInvalidRnrRetry = 29,
  kDuplicateLocalCommId = 30,
  kUnsupportedClassVersion = 31,
  kInvalidFlowLabel = 32,
  kInvalidAltFlowLabel = 33,
  kVendorOptionNotSupported = 35,  // IBTA 1.4 (Linux's ECE)
};

struct CmRej {
  static constexpr uint16_t kAttributeId = cm_attr::kRej;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kAriOffset = 12;
  static constexpr std::size_t kAriSize = 72;
  static constexpr std::size_t kPrivateDataOffset = 84;
  static constexpr std::size_t kPrivateDataSize = 148;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;           // 0 when rejecting a REQ
  uint8_t message_rejected = 0;          // 2 bits, cm_rej_msg::
  uint8_t reject_info_length = 0;        // 7 bits: the bytes of `ari` that count
  CmRejReason reason = CmRejReason::kConsumerReject;  // what rdma_reject sends
  std::array<uint8_t, kAriSize> ari{};
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes; each field is masked to its width.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmRej> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmRej&, const CmRej&) = default;
};

}  // namespace ibfab::mad
