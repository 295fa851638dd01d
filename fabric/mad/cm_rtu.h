#pragma once
// RTU, ready to use (IBTA 1.3 vol 1, 12.6; AttributeID 0x0014): the active
// side's answer to a REP. DREP (0x0016, cm_dreq.h) has the same layout.
// Byte offsets within the 232-byte message:
//   0 LocalCommunicationID(32)   4 RemoteCommunicationID(32)
//   8 PrivateData(224 bytes)
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"

namespace ibfab::mad {

// A CM message of the two communication IDs and private data only.
template <uint16_t AttributeId>
struct CmIdsMessage {
  static constexpr uint16_t kAttributeId = AttributeId;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kPrivateDataOffset = 8;
  static constexpr std::size_t kPrivateDataSize = 224;

  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Writes all kSize bytes.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmIdsMessage> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmIdsMessage&, const CmIdsMessage&) = default;
};

using CmRtu = CmIdsMessage<cm_attr::kRtu>;
using CmDrep = CmIdsMessage<cm_attr::kDrep>;  // cm_dreq.h

extern template struct CmIdsMessage<cm_attr::kRtu>;
extern template struct CmIdsMessage<cm_attr::kDrep>;

}  // namespace ibfab::mad
