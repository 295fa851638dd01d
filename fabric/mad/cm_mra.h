#pragma once
// MRA, message receipt acknowledgement (IBTA 1.3 vol 1, 12.6; AttributeID
// 0x0011): "your REQ, REP or LAP arrived; the answer will take up to
// ServiceTimeout more". Byte offsets within the 232-byte message (bits
// numbered 7..0, 7 most significant):
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 MessageMRAed 7:6 | reserved 5:0
//   9 ServiceTimeout 7:3 | reserved 2:0
//  10 PrivateData(222 bytes)
// Reserved bits are written as zero and ignored on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"

namespace ibfab::mad {

// MRA:MessageMRAed (2 bits).
namespace cm_mra_msg {
inline constexpr uint8_t kReq = 0;
inline constexpr uint8_t kRep = 1;
inline constexpr uint8_t kLap = 2;
}  // namespace cm_mra_msg

struct CmMra {
  static constexpr uint16_t kAttributeId = cm_attr::kMra;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kPrivateDataOffset = 10;
  static constexpr std::size_t kPrivateDataSize = 222;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  uint8_t message_mraed = 0;      // 2 bits, cm_mra_msg::
  uint8_t service_timeout = 0;    // 5 bits: 4.096 us * 2^value
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes; each field is masked to its width.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmMra> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmMra&, const CmMra&) = default;
};

}  // namespace ibfab::mad
