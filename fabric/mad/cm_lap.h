#pragma once
// LAP and APR, load alternate path and its reply (IBTA 1.3 vol 1, 12.6;
// AttributeIDs 0x0019 and 0x001A): automatic path migration's way to give
// an established connection a new alternate path (rdma_cm has no call that
// sends one). Byte offsets within the 232-byte
// message (bits numbered 7..0, 7 most significant):
// LAP:
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 reserved(32)
//  12 RemoteQPN/EECN(24)   15 RemoteCMResponseTimeout 7:3 | reserved 2:0
//  16 reserved(32)
//  20 AlternatePath(44 bytes, cm_path.h's LAP layout)
//  64 PrivateData(168 bytes)
// APR:
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 AdditionalInfoLength(8)   9 APStatus(8)   10 reserved(16)
//  12 AdditionalInfo(72 bytes)  84 PrivateData(148 bytes)
// Reserved bits are written as zero and ignored on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"
#include "fabric/mad/cm_path.h"

namespace ibfab::mad {

struct CmLap {
  static constexpr uint16_t kAttributeId = cm_attr::kLap;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kAlternatePathOffset = 20;
  static constexpr std::size_t kPrivateDataOffset = 64;
  static constexpr std::size_t kPrivateDataSize = 168;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  uint32_t remote_qpn_eecn = 0;             // 24 bits
  uint8_t remote_cm_response_timeout = 0;   // 5 bits: 4.096 us * 2^value
  CmPath alternate_path;
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes; each field is masked to its width.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmLap> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmLap&, const CmLap&) = default;
};

// APR:APStatus (Linux's enum ib_cm_apr_status has the same values).
enum class CmAprStatus : uint8_t {
  kLoaded = 0,
  kInvalidCommId = 1,
  kUnsupported = 2,
  kRejected = 3,
  kRedirect = 4,
  kIsCurrent = 5,
  kInvalidQpnEecn = 6,
  kInvalidLid = 7,
  kInvalidGid = 8,
  kInvalidFlowLabel = 9,
  kInvalidTrafficClass = 10,
  kInvalidHopLimit = 11,
  kInvalidPacketRate = 12,
  kInvalidSl = 13,
};

struct CmApr {
  static constexpr uint16_t kAttributeId = cm_attr::kApr;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kAdditionalInfoOffset = 12;
  static constexpr std::size_t kAdditionalInfoSize = 72;
  static constexpr std::size_t kPrivateDataOffset = 84;
  static constexpr std::size_t kPrivateDataSize = 148;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  uint8_t additional_info_length = 0;  // as on the wire; the IBTA allows 0..72
  CmAprStatus ap_status = CmAprStatus::kLoaded;
  std::array<uint8_t, kAdditionalInfoSize> additional_info{};
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmApr> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmApr&, const CmApr&) = default;
};

}  // namespace ibfab::mad
