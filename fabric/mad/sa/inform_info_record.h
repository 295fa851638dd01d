#pragma once
// InformInfoRecord (SA attribute 0x00F3, IBTA 1.3 vol 1, 15.2.5.12): one
// subscription. 60 bytes, padded to 64 (AttributeOffset 8).
//
//   0 SubscriberGID(16)   16 Enum   18 reserved(48)   24 InformInfo(36)
// The embedded InformInfo uses its codec (inform_info.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/sa/inform_info.h"
#include "fabric/wire/gid.h"

namespace ibfab::mad {

namespace iir_comp {
inline constexpr uint64_t kSubscriberGid = 1ull << 0;
inline constexpr uint64_t kEnum = 1ull << 1;
}  // namespace iir_comp

struct InformInfoRecord {
  static constexpr uint16_t kAttributeId = 0x00F3;
  static constexpr std::size_t kSize = 60;
  static constexpr uint16_t kAttributeOffset = 8;
  static constexpr std::size_t kInformInfoOffset = 24;

  wire::Gid subscriber_gid{};
  uint16_t subscriber_enum = 0;
  InformInfo inform_info{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static InformInfoRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const InformInfoRecord&, const InformInfoRecord&) = default;
};

}  // namespace ibfab::mad
