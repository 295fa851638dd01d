#pragma once
// Service ID Resolution messages of the Communication Manager (IBTA 1.3
// vol 1, chapter 12): what rdma_cm's UD ids exchange to learn a remote QPN and
// Q_Key. Each message is the 232 bytes of a CM MAD after its 24-byte
// common header (cm_mad.h: make_cm_mad, cm_message).
//
// SIDR_REQ (attribute 0x0017), offsets within the 232 bytes:
//   0 RequestID(32)   4 P_Key(16)   6 reserved(16)   8 ServiceID(64)
//  16 PrivateData(216 bytes)
// SIDR_REP (attribute 0x0018):
//   0 RequestID(32)   4 Status(8)   5 AdditionalInfoLength(8)
//   6 reserved(16)    8 QPN(24) reserved(8)   12 ServiceID(64)
//  20 Q_Key(32)      24 AdditionalInfo(72 bytes)   96 PrivateData(136 bytes)
// IBTA 1.4 puts a VendorID in SIDR_REP bytes 6-7 and 11 (Linux's
// CM_SIDR_REP_VENDOR_ID_H/L); it is written as zero and not read here.
// Reserved bytes are written as zero and ignored on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/cm_mad.h"

namespace ibfab::mad {

// SIDR_REP Status.
namespace sidr_status {
inline constexpr uint8_t kValid = 0;                // QPN and Q_Key are valid
inline constexpr uint8_t kSidNotSupported = 1;      // no listener for the ServiceID
inline constexpr uint8_t kRejected = 2;             // the service refused
inline constexpr uint8_t kNoQp = 3;                 // no QP for the service now
inline constexpr uint8_t kRedirect = 4;             // ClassPortInfo in AdditionalInfo
inline constexpr uint8_t kVersionNotSupported = 5;  // an unsupported service version
}  // namespace sidr_status

struct SidrReq {
  static constexpr uint16_t kAttributeId = cm_attr::kSidrReq;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kPrivateDataOffset = 16;
  static constexpr std::size_t kPrivateDataSize = 216;

  uint32_t request_id = 0;
  uint16_t p_key = 0;
  uint64_t service_id = 0;
  std::array<uint8_t, kPrivateDataSize> private_data{};

  void pack(std::span<uint8_t, kSize> out) const;
  static SidrReq unpack(std::span<const uint8_t, kSize> in);

  friend bool operator==(const SidrReq&, const SidrReq&) = default;
};

struct SidrRep {
  static constexpr uint16_t kAttributeId = cm_attr::kSidrRep;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kAdditionalInfoOffset = 24;
  static constexpr std::size_t kAdditionalInfoSize = 72;
  static constexpr std::size_t kPrivateDataOffset = 96;
  static constexpr std::size_t kPrivateDataSize = 136;

  uint32_t request_id = 0;
  uint8_t status = sidr_status::kValid;
  uint8_t additional_info_length = 0;  // as on the wire; the IBTA allows 0..72
  uint32_t qpn = 0;                    // 24 bits; pack masks it
  uint64_t service_id = 0;
  uint32_t q_key = 0;
  std::array<uint8_t, kAdditionalInfoSize> additional_info{};
  std::array<uint8_t, kPrivateDataSize> private_data{};

  void pack(std::span<uint8_t, kSize> out) const;
  static SidrRep unpack(std::span<const uint8_t, kSize> in);

  friend bool operator==(const SidrRep&, const SidrRep&) = default;
};

}  // namespace ibfab::mad
