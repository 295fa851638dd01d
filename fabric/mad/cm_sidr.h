#pragma once
// The Communication Management class's Service ID Resolution messages
// (IBTA 12.11: SIDR_REQ 0x0017, SIDR_REP 0x0018), which rdma_cm uses to
// "connect" UD ids. Both fill the 232 bytes after the common MAD header;
// they travel as method Send (0x03) on QP1, class 0x07 version 2, and the
// REP carries the REQ's TID.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ibfab::mad {

inline constexpr uint8_t kCmClass = 0x07;
inline constexpr uint8_t kCmClassVersion = 2;
inline constexpr std::size_t kCmDataOffset = 24;
inline constexpr std::size_t kCmDataSize = 232;

namespace sidr_status {
inline constexpr uint8_t kValid = 0;
inline constexpr uint8_t kServiceIdNotSupported = 1;
inline constexpr uint8_t kRejected = 2;
inline constexpr uint8_t kNoQp = 3;
inline constexpr uint8_t kRedirect = 4;
inline constexpr uint8_t kVersionNotSupported = 5;
}  // namespace sidr_status

struct SidrReq {
  static constexpr uint16_t kAttributeId = 0x0017;
  static constexpr std::size_t kPrivateDataSize = 216;
  uint32_t request_id = 0;
  uint16_t p_key = 0;
  uint64_t service_id = 0;
  std::array<uint8_t, kPrivateDataSize> private_data{};

  void pack(std::span<uint8_t, kCmDataSize> out) const;
  static SidrReq unpack(std::span<const uint8_t, kCmDataSize> in);
  friend bool operator==(const SidrReq&, const SidrReq&) = default;
};

struct SidrRep {
  static constexpr uint16_t kAttributeId = 0x0018;
  static constexpr std::size_t kAdditionalInfoSize = 72;
  static constexpr std::size_t kPrivateDataSize = 136;
  uint32_t request_id = 0;
  uint8_t status = 0;  // sidr_status
  uint8_t additional_info_length = 0;
  uint32_t qpn = 0;    // 24 bits
  uint64_t service_id = 0;
  uint32_t q_key = 0;
  std::array<uint8_t, kAdditionalInfoSize> additional_info{};  // ClassPortInfo when redirecting
  std::array<uint8_t, kPrivateDataSize> private_data{};

  void pack(std::span<uint8_t, kCmDataSize> out) const;
  static SidrRep unpack(std::span<const uint8_t, kCmDataSize> in);
  friend bool operator==(const SidrRep&, const SidrRep&) = default;
};

// A fresh CM MAD: zeroed, then BaseVersion 1, class 0x07, version 2,
// method Send, `tid` and `attribute_id`; the message goes in cm_data().
void make_cm_mad(std::span<uint8_t, 256> mad, uint16_t attribute_id, uint64_t tid);
inline std::span<uint8_t, kCmDataSize> cm_data(std::span<uint8_t, 256> mad) {
  return mad.subspan<kCmDataOffset, kCmDataSize>();
}
inline std::span<const uint8_t, kCmDataSize> cm_data(std::span<const uint8_t, 256> mad) {
  return mad.subspan<kCmDataOffset, kCmDataSize>();
}

}  // namespace ibfab::mad
