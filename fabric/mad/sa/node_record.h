#pragma once
// NodeRecord (SA attribute 0x0011, IBTA 1.3 vol 1, 15.2.5.2): 108 bytes,
// padded to 112 in a GetTable response (AttributeOffset 14).
//
//   0 LID   2 reserved(16)   4 NodeInfo(40)   44 NodeDescription(64)
// The embedded attributes use the SMP codecs (node_info.h,
// node_description.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"

namespace ibfab::mad {

// NodeRecord ComponentMask bits: the record ID, then the NodeInfo fields in
// order, then NodeDescription.
namespace nr_comp {
inline constexpr uint64_t kLid = 1ull << 0;
// bit 1 reserved
inline constexpr uint64_t kBaseVersion = 1ull << 2;
inline constexpr uint64_t kClassVersion = 1ull << 3;
inline constexpr uint64_t kNodeType = 1ull << 4;
inline constexpr uint64_t kNumPorts = 1ull << 5;
inline constexpr uint64_t kSystemImageGuid = 1ull << 6;
inline constexpr uint64_t kNodeGuid = 1ull << 7;
inline constexpr uint64_t kPortGuid = 1ull << 8;
inline constexpr uint64_t kPartitionCap = 1ull << 9;
inline constexpr uint64_t kDeviceId = 1ull << 10;
inline constexpr uint64_t kRevision = 1ull << 11;
inline constexpr uint64_t kLocalPortNum = 1ull << 12;
inline constexpr uint64_t kVendorId = 1ull << 13;
inline constexpr uint64_t kNodeDescription = 1ull << 14;
}  // namespace nr_comp

struct NodeRecord {
  static constexpr uint16_t kAttributeId = 0x0011;
  static constexpr std::size_t kSize = 108;
  static constexpr uint16_t kAttributeOffset = 14;
  static constexpr std::size_t kNodeInfoOffset = 4;
  static constexpr std::size_t kNodeDescriptionOffset = 44;

  uint16_t lid = 0;
  NodeInfo node_info{};
  NodeDescription node_description{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static NodeRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const NodeRecord&, const NodeRecord&) = default;
};

}  // namespace ibfab::mad
