#pragma once
// SwitchInfo (SMP attribute 0x0012, IBTA 1.3 vol 1, 14.2.5.4): 20 bytes.
//
//   0 LinearFDBCap  2 RandomFDBCap  4 MulticastFDBCap  6 LinearFDBTop
//   8 DefaultPort  9 DefaultMulticastPrimaryPort  10 DefaultMulticastNotPrimaryPort
//  11 LifeTimeValue 7:3 | PortStateChange 2 | OptimizedSLtoVLMappingProgramming 1:0
//  12 LIDsPerPort  14 PartitionEnforcementCap
//  16 InboundEnforcementCap 7 | OutboundEnforcementCap 6 | FilterRawInboundCap 5 |
//     FilterRawOutboundCap 4 | EnhancedPort0 3 | reserved 2:0
//  17 reserved  18 MulticastFDBTop
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct SwitchInfo {
  static constexpr uint16_t kAttributeId = 0x0012;
  static constexpr std::size_t kSize = 20;

  uint16_t linear_fdb_cap = 0;
  uint16_t random_fdb_cap = 0;
  uint16_t multicast_fdb_cap = 0;
  uint16_t linear_fdb_top = 0;
  uint8_t default_port = 0;
  uint8_t default_multicast_primary_port = 0;
  uint8_t default_multicast_not_primary_port = 0;
  uint8_t life_time_value = 0;                       // 5 bits
  bool port_state_change = false;                    // write 1 to clear
  uint8_t optimized_sl_to_vl_mapping_programming = 0;  // 2 bits
  uint16_t lids_per_port = 0;
  uint16_t partition_enforcement_cap = 0;
  bool inbound_enforcement_cap = false;
  bool outbound_enforcement_cap = false;
  bool filter_raw_inbound_cap = false;
  bool filter_raw_outbound_cap = false;
  bool enhanced_port0 = false;
  uint16_t multicast_fdb_top = 0;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static SwitchInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const SwitchInfo&, const SwitchInfo&) = default;
};

}  // namespace ibfab::mad
