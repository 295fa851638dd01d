#pragma once
// NodeInfo (SMP attribute 0x0011, IBTA 1.3 vol 1, 14.2.5.3): 40 bytes.
//
//   0 BaseVersion  1 ClassVersion  2 NodeType  3 NumPorts
//   4 SystemImageGUID  12 NodeGUID  20 PortGUID
//  28 PartitionCap  30 DeviceID  32 Revision  36 LocalPortNum  37 VendorID(24)
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct NodeInfo {
  static constexpr uint16_t kAttributeId = 0x0011;
  static constexpr std::size_t kSize = 40;

  // NodeType values.
  static constexpr uint8_t kTypeCa = 1;
  static constexpr uint8_t kTypeSwitch = 2;
  static constexpr uint8_t kTypeRouter = 3;

  uint8_t base_version = 1;
  uint8_t class_version = 1;
  uint8_t node_type = kTypeCa;
  uint8_t num_ports = 0;
  uint64_t system_image_guid = 0;
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;
  uint16_t partition_cap = 0;
  uint16_t device_id = 0;
  uint32_t revision = 0;
  uint8_t local_port_num = 0;
  uint32_t vendor_id = 0;  // 24 bits

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static NodeInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const NodeInfo&, const NodeInfo&) = default;
};

}  // namespace ibfab::mad
