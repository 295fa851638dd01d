#pragma once
// InformInfo (SA attribute 0x0003, IBTA 1.3 vol 1, 13.4.8.3): a subscription
// to traps, sent to the SA with Set. 36 bytes (AttributeOffset 5).
//
//   0 GID(16)   16 LIDRangeBegin   18 LIDRangeEnd   20 reserved(16)
//  22 IsGeneric   23 Subscribe   24 Type   26 TrapNumber / DeviceID
//  28 QPN 31:8 | reserved 7:5 | RespTimeValue 4:0
//  32 reserved(8)   33 ProducerType / VendorID (24)
// A zero GID selects by LID range; LIDRangeBegin 0xFFFF means every LID.
// Type, TrapNumber and ProducerType take the wildcards below. IsGeneric
// and Subscribe are kept as bytes so that the SA can reject values other
// than 0 and 1 (status 0x0200).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/wire/gid.h"

namespace ibfab::mad {

namespace inform_info {
inline constexpr uint16_t kAllLids = 0xFFFF;           // LIDRangeBegin
inline constexpr uint16_t kAllTypes = 0xFFFF;          // Type
inline constexpr uint16_t kAllTraps = 0xFFFF;          // TrapNumber / DeviceID
inline constexpr uint32_t kAllProducers = 0xFFFFFF;    // ProducerType / VendorID
inline constexpr uint8_t kUnsubscribe = 0;
inline constexpr uint8_t kSubscribe = 1;
}  // namespace inform_info

struct InformInfo {
  static constexpr uint16_t kAttributeId = 0x0003;
  static constexpr std::size_t kSize = 36;
  static constexpr uint16_t kAttributeOffset = 5;

  wire::Gid gid{};
  uint16_t lid_range_begin = 0;
  uint16_t lid_range_end = 0;
  uint8_t is_generic = 0;        // 1 generic, 0 vendor-specific
  uint8_t subscribe = 0;         // inform_info::kSubscribe / kUnsubscribe
  uint16_t type = 0;             // notice_type:: (notice.h), or kAllTypes
  uint16_t trap_number = 0;      // trap_number:: (notice.h); DeviceID when !is_generic
  uint32_t qpn = 0;              // 24 bits
  uint8_t resp_time_value = 0;   // 5 bits
  uint32_t producer_type = 0;    // 24 bits; VendorID when !is_generic

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  // Each field is masked to its width.
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static InformInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const InformInfo&, const InformInfo&) = default;
};

}  // namespace ibfab::mad
