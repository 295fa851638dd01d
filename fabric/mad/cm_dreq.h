#pragma once
// DREQ and DREP, the disconnection request and its reply (IBTA 1.3 vol 1,
// 12.6; AttributeIDs 0x0015 and 0x0016). Byte offsets within the 232-byte
// message:
// DREQ:
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 RemoteQPN/EECN(24) | reserved(8)
//  12 PrivateData(220 bytes)
// DREP (CmDrep, declared with RTU's layout in cm_rtu.h):
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 PrivateData(224 bytes)
// Reserved bits are written as zero and ignored on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"
#include "fabric/mad/cm_rtu.h"

namespace ibfab::mad {

struct CmDreq {
  static constexpr uint16_t kAttributeId = cm_attr::kDreq;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kPrivateDataOffset = 12;
  static constexpr std::size_t kPrivateDataSize = 220;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  uint32_t remote_qpn_eecn = 0;  // 24 bits: the receiver's QPN (RC, UC) or EECN (RD)
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes; remote_qpn_eecn is masked to 24 bits.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmDreq> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmDreq&, const CmDreq&) = default;
};

}  // namespace ibfab::mad
